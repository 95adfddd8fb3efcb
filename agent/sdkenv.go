package agent

import "strings"

// sdkEnv is what Azure's SDKs need to reach Shoal from a job or an
// instance's shells, notebooks and apps: azure-ai-ml sends its management
// calls to AZUREML_DEV_URL_MFE when it is set, and the server's private
// CA, when it has one, joins the system's roots in a bundle the usual
// variables name (requests, OpenSSL, curl).
func (a *Agent) sdkEnv() map[string]string {
	env := map[string]string{"AZUREML_DEV_URL_MFE": strings.TrimRight(a.cfg.ServerURL, "/") + "/"}
	if bundle := a.caBundle(); bundle != "" {
		env["REQUESTS_CA_BUNDLE"], env["SSL_CERT_FILE"], env["CURL_CA_BUNDLE"] = bundle, bundle, bundle
	}
	return env
}
