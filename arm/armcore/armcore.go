// Package armcore holds what every part of Azure's Resource Manager
// facade shares and the parts do not own: the scope a request names and
// a resource's creation metadata. Package arm serves the routes; package
// arm/armjob translates jobs; both use these.
package armcore

import (
	"fmt"
	"time"
)

// Scope is the subscription and resource group a request named: echoed
// in ids, never required to exist.
type Scope struct {
	Subscription, ResourceGroup string
}

// WorkspaceID is the ARM id of a workspace in scope.
func (s Scope) WorkspaceID(ws string) string {
	return fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/Microsoft.MachineLearningServices/workspaces/%s", s.Subscription, s.ResourceGroup, ws)
}

// SystemData is Azure's creation metadata of a resource.
type SystemData struct {
	CreatedAt time.Time `json:"createdAt"`
	CreatedBy string    `json:"createdBy,omitempty"`
}

// ErrorBody is Azure's error envelope: what every failed request answers,
// and what a ComputeInstance lists under its errors.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is Azure's ErrorDetail: a code, a message, the field it is
// about and details (always a list, as Azure's SDKs read it).
type ErrorDetail struct {
	Code    string        `json:"code"`
	Message string        `json:"message"`
	Target  string        `json:"target,omitempty"`
	Details []ErrorDetail `json:"details"`
}

// Short cuts a value quoted in an error to a readable length.
func Short(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
