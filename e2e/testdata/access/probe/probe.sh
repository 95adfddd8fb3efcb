#!/bin/bash
# The managed identity probe of e2e/access_test.go. It runs as a job: it
# gets tokens from the rank's managed identity endpoint the way Azure ML
# code does and uses them on Shoal's API, and writes what happened as
# KEY=VALUE lines to <output folder>/result.env (bodies next to it, for
# diagnosis). It never prints a token; it saves the token and the
# endpoint's secret in its outputs, for the test to check that neither
# shows in a log, and that the token is refused once the job ended.
#
#   bash probe.sh OUTPUT_FOLDER
#
# Environment (set by the test with --set environment_variables.X=...):
#   PROBE_API             the server's URL
#   PROBE_PUT_COMPUTE     a compute to create with PUT (empty: skip)
#   PROBE_SUBMIT_COMPUTE  a compute to submit a follow-up job to (empty: skip)
set -u
out=$1
mkdir -p "$out"
res=$out/result.env
: >"$res"
put() { echo "$1=$2" >>"$res"; }

put msi_endpoint "${MSI_ENDPOINT:-}"
for v in MSI_SECRET IDENTITY_ENDPOINT IDENTITY_HEADER DEFAULT_IDENTITY_CLIENT_ID; do
	if [ -n "${!v:-}" ]; then put "has_$v" yes; else put "has_$v" no; fi
done
put default_identity_client_id "${DEFAULT_IDENTITY_CLIENT_ID:-}"
if [ -z "${MSI_ENDPOINT:-}" ]; then
	echo "probe: this job has no managed identity endpoint"
	exit 0
fi
printf '%s' "$MSI_SECRET" >"$out/msi_secret.txt"

# msi STEP RESOURCE [HEADER...]: ask the endpoint (Azure ML form) for a
# token for RESOURCE; the answer goes to STEP.json, the status to STEP.
msi() {
	local step=$1 resource=$2
	shift 2
	put "$step" "$(curl -sS -o "$out/$step.json" -w '%{http_code}' "$@" -G \
		--data-urlencode "resource=$resource" --data-urlencode "api-version=2017-09-01" "$MSI_ENDPOINT")"
}
token_of() { sed -n 's/.*"access_token":"\([^"]*\)".*/\1/p' "$out/$1.json"; }

msi msi_no_secret shoal
msi msi_wrong_secret shoal -H "Secret: not-the-secret"
msi msi shoal -H "Secret: $MSI_SECRET"
token=$(token_of msi)
printf '%s' "$token" >"$out/token.txt"
# The App Service form the Azure SDKs prefer.
put identity_endpoint "$(curl -sS -o "$out/identity_endpoint.json" -w '%{http_code}' -G -H "X-IDENTITY-HEADER: $IDENTITY_HEADER" \
	--data-urlencode "resource=api://shoal" --data-urlencode "api-version=2019-08-01" "$IDENTITY_ENDPOINT")"
msi msi_server_url "$PROBE_API" -H "Secret: $MSI_SECRET"
msi msi_other_audience "https://management.azure.com/" -H "Secret: $MSI_SECRET"

# api STEP TOKEN METHOD PATH [BODY]: call Shoal's API with a bearer token.
api() {
	local step=$1 tok=$2 method=$3 path=$4
	local args=(-sS -o "$out/$step.json" -w '%{http_code}' -X "$method" -H "Authorization: Bearer $tok")
	if [ $# -ge 5 ]; then args+=(-H "Content-Type: application/json" --data "$5"); fi
	put "$step" "$(curl "${args[@]}" "$PROBE_API$path")"
}
ws=/api/v1/workspaces/$SHOAL_WORKSPACE
api get_computes "$token" GET "$ws/computes"
api get_computes_app_service "$(token_of identity_endpoint)" GET "$ws/computes"
api get_computes_server_url "$(token_of msi_server_url)" GET "$ws/computes"
api get_computes_other_audience "$(token_of msi_other_audience)" GET "$ws/computes"
api get_own_job "$token" GET "$ws/jobs/$SHOAL_JOB_NAME"
api list_users "$token" GET /api/v1/users
if [ -n "${PROBE_PUT_COMPUTE:-}" ]; then
	api put_compute "$token" PUT "$ws/computes/$PROBE_PUT_COMPUTE" '{"type": "amlcompute", "min_instances": 0, "max_instances": 1}'
fi
if [ -n "${PROBE_SUBMIT_COMPUTE:-}" ]; then
	api submit_job "$token" POST "$ws/jobs" "{\"command\": \"echo hi\", \"compute\": \"$PROBE_SUBMIT_COMPUTE\"}"
fi
echo "probe: done"
