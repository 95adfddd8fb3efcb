// Package accesstest is the store conformance suite's part for who may
// do what: users, identities, service principals, API tokens, roles and
// their assignments, signing keys and the audit log (storetest.Run runs
// it with the rest).
package accesstest

import "github.com/shoal-ml/shoal/store/storetest/stcheck"

// Cases are this part's tests, for storetest.Run.
func Cases() []stcheck.Case {
	return []stcheck.Case{
		{Name: "Tokens", Fn: testTokens},
		{Name: "TokenUpdate", Fn: testTokenUpdate},
		{Name: "Users", Fn: testUsers},
		{Name: "Identities", Fn: testIdentities},
		{Name: "ServicePrincipals", Fn: testServicePrincipals},
		{Name: "Roles", Fn: testRoles},
		{Name: "RoleAssignments", Fn: testRoleAssignments},
		{Name: "Audit", Fn: testAudit},
		{Name: "SigningKeys", Fn: testSigningKeys},
	}
}
