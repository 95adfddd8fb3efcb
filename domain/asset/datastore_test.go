package asset_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
)

// Each datastore type decodes from Azure's YAML keys, with Azure's
// defaults filled and the credential type shown.
func TestDecodeDatastoreTypes(t *testing.T) {
	for _, tc := range []struct {
		doc   string
		check func(d asset.Datastore) string
		creds asset.CredentialsType
	}{
		{`{"name":"blob_example","type":"azure_blob","account_name":"acct","container_name":"data","credentials":{"account_key":"k=="}}`,
			func(d asset.Datastore) string {
				return d.Endpoint + " " + d.Protocol + " " + d.BlobServiceURL()
			}, asset.CredentialsAccountKey},
		{`{"name":"sas","type":"azure_blob","account_name":"acct","container_name":"data","protocol":"wasbs","credentials":{"sas_token":"?sv=1&sig=x"}}`,
			func(d asset.Datastore) string { return d.BlobServiceURL() }, asset.CredentialsSAS},
		{`{"name":"azurite","type":"azure_blob","account_name":"devstoreaccount1","container_name":"data","endpoint":"http://10.1.2.3:10000/devstoreaccount1"}`,
			func(d asset.Datastore) string { return d.BlobServiceURL() }, asset.CredentialsNone},
		{`{"name":"lake","type":"azure_data_lake_gen2","account_name":"acct","filesystem":"fs1","credentials":{"tenant_id":"t","client_id":"c","client_secret":"s"}}`,
			func(d asset.Datastore) string { return d.Container() }, asset.CredentialsServicePrincipal},
		{`{"name":"minio","type":"s3","bucket":"b-1","endpoint_url":"http://10.0.0.5:9000/","credentials":{"access_key_id":"AK","secret_access_key":"SK"}}`,
			func(d asset.Datastore) string { return d.EndpointURL + " " + d.Region }, asset.CredentialsAccessKey},
		{`{"name":"shared","type":"nfs","path":"/mnt/datasets/"}`,
			func(d asset.Datastore) string { return d.Path }, asset.CredentialsNone},
	} {
		spec, err := asset.DecodeDatastore([]byte(tc.doc))
		if err != nil {
			t.Fatalf("%s: %v", tc.doc, err)
		}
		if spec.Datastore.CredentialsType != tc.creds {
			t.Errorf("%s: credentials_type %s, want %s", spec.Datastore.Name, spec.Datastore.CredentialsType, tc.creds)
		}
		t.Logf("%s: %s", spec.Datastore.Name, tc.check(spec.Datastore))
	}
	spec, _ := asset.DecodeDatastore([]byte(`{"name":"b","type":"azure_blob","account_name":"acct","container_name":"data"}`))
	if got := spec.Datastore.BlobServiceURL(); got != "https://acct.blob.core.windows.net" {
		t.Errorf("blob service URL %q", got)
	}
	spec, _ = asset.DecodeDatastore([]byte(`{"name":"b","type":"azure_blob","account_name":"devstoreaccount1","container_name":"data","endpoint":"http://10.1.2.3:10000/devstoreaccount1/"}`))
	if got := spec.Datastore.BlobServiceURL(); got != "http://10.1.2.3:10000/devstoreaccount1" {
		t.Errorf("azurite blob service URL %q", got)
	}
	spec, _ = asset.DecodeDatastore([]byte(`{"name":"s","type":"s3","bucket":"bkt","endpoint_url":"http://10.0.0.5:9000/"}`))
	if spec.Datastore.Region != "us-east-1" || spec.Datastore.EndpointURL != "http://10.0.0.5:9000" {
		t.Errorf("s3 defaults: %+v", spec.Datastore)
	}
}

// Hostile and mistaken datastores are refused with an error naming the
// field and the rule; no error quotes a secret.
func TestDecodeDatastoreRefusals(t *testing.T) {
	const secret = "TOPSECRETVALUE"
	for _, tc := range []struct{ doc, field, words string }{
		{`{"name":"x","type":"azure_blob","account_name":"acct","container_name":"data","colour":"red"}`, "colour", "is not a key of a datastore"},
		{`{"name":"x","type":"azure_blob","account_name":"acct","container_name":"data","credentials":{"password":"` + secret + `"}}`, "credentials.password", "is not a key"},
		{`{"name":"x","type":"gcs"}`, "type", "not a datastore type"},
		{`{"name":"x"}`, "type", "is required"},
		{`{"type":"nfs","path":"/mnt"}`, "name", "is required"},
		{`{"name":"workspaceblobstore","type":"nfs","path":"/mnt"}`, "name", "built-in"},
		{`{"name":"bad name","type":"nfs","path":"/mnt"}`, "name", "letters, digits"},
		{`{"name":"x","type":"azure_blob","container_name":"data"}`, "account_name", "is required"},
		{`{"name":"x","type":"azure_blob","account_name":"Acct_1","container_name":"data"}`, "account_name", "lower-case"},
		{`{"name":"x","type":"azure_blob","account_name":"acct","container_name":"Data"}`, "container_name", "lower-case"},
		{`{"name":"x","type":"azure_blob","account_name":"acct","container_name":"data","bucket":"b"}`, "bucket", "not a field of a azure_blob"},
		{`{"name":"x","type":"azure_blob","account_name":"acct","container_name":"data","protocol":"ftp"}`, "protocol", "https, wasbs or http"},
		{`{"name":"x","type":"azure_blob","account_name":"acct","container_name":"data","endpoint":"http://127.0.0.1:10000/devstoreaccount1"}`, "endpoint", "loopback"},
		{`{"name":"x","type":"azure_blob","account_name":"acct","container_name":"data","endpoint":"http://[::1]:10000/a"}`, "endpoint", "loopback"},
		{`{"name":"x","type":"azure_blob","account_name":"acct","container_name":"data","endpoint":"http://localhost:10000/a"}`, "endpoint", "loopback"},
		{`{"name":"x","type":"azure_blob","account_name":"acct","container_name":"data","endpoint":"localhost"}`, "endpoint", "loopback"},
		{`{"name":"x","type":"azure_blob","account_name":"acct","container_name":"data","endpoint":"http://user:` + secret + `@10.0.0.1/a"}`, "endpoint", "user info"},
		{`{"name":"x","type":"s3","bucket":"bkt","endpoint_url":"http://169.254.169.254/"}`, "endpoint_url", "link-local"},
		{`{"name":"x","type":"s3","bucket":"bkt","endpoint_url":"http://[fe80::1]:9000"}`, "endpoint_url", "link-local"},
		{`{"name":"x","type":"s3","bucket":"bkt","endpoint_url":"http://0.0.0.0:9000"}`, "endpoint_url", "unspecified"},
		{`{"name":"x","type":"s3","bucket":"bkt","endpoint_url":"http://224.0.0.1:9000"}`, "endpoint_url", "multicast"},
		{`{"name":"x","type":"s3","bucket":"bkt","endpoint_url":"http://[::ffff:127.0.0.1]:9000"}`, "endpoint_url", "loopback"},
		{`{"name":"x","type":"s3","bucket":"bkt","endpoint_url":"http://2130706433:9000"}`, "endpoint_url", "numeric host"},
		{`{"name":"x","type":"s3","bucket":"bkt","endpoint_url":"http://0x7f.1:9000"}`, "endpoint_url", "numeric host"},
		{`{"name":"x","type":"s3","bucket":"bkt","endpoint_url":"http://metadata.google.internal/"}`, "endpoint_url", "metadata"},
		{`{"name":"x","type":"s3","bucket":"bkt","endpoint_url":"ftp://10.0.0.5/"}`, "endpoint_url", "http:// or https://"},
		{`{"name":"x","type":"s3","bucket":"bkt","endpoint_url":"http://10.0.0.5:9000/other"}`, "endpoint_url", "must not have a path"},
		{`{"name":"x","type":"s3","bucket":"bkt","endpoint_url":"http://10.0.0.5:9000?x=1"}`, "endpoint_url", "query"},
		{`{"name":"x","type":"s3","bucket":"Bad_Bucket"}`, "bucket", "lower-case"},
		{`{"name":"x","type":"s3","bucket":"bkt","credentials":{"access_key_id":"AK"}}`, "credentials.secret_access_key", "is required"},
		{`{"name":"x","type":"s3","bucket":"bkt","credentials":{"secret_access_key":"` + secret + `"}}`, "credentials.access_key_id", "is required"},
		{`{"name":"x","type":"s3","bucket":"bkt","credentials":{"account_key":"` + secret + `"}}`, "credentials", "access_key credentials"},
		{`{"name":"x","type":"azure_blob","account_name":"acct","container_name":"data","credentials":{"account_key":"` + secret + `","sas_token":"` + secret + `"}}`, "credentials", "more than one kind"},
		{`{"name":"x","type":"azure_blob","account_name":"acct","container_name":"data","credentials":{"client_secret":"` + secret + `"}}`, "credentials", "account_key, sas"},
		{`{"name":"x","type":"azure_data_lake_gen2","account_name":"acct","filesystem":"fs1","credentials":{"client_secret":"` + secret + `"}}`, "credentials.tenant_id", "is required"},
		{`{"name":"x","type":"azure_blob","account_name":"acct","container_name":"data","credentials":{"account_key":"a\u0000` + secret + `"}}`, "credentials.account_key", "control characters"},
		{`{"name":"x","type":"azure_blob","account_name":"acct","container_name":"data","credentials":{"account_key":7}}`, "credentials.account_key", "must be a string"},
		{`{"name":"x","type":"nfs","path":"relative/dir"}`, "path", "absolute"},
		{`{"name":"x","type":"nfs","path":"/mnt/../etc"}`, "path", "'..'"},
		{`{"name":"x","type":"nfs","path":"/"}`, "path", "must not be /"},
		{`{"name":"x","type":"nfs","path":"/mnt","credentials":{"account_key":"` + secret + `"}}`, "credentials", "takes no credentials"},
		{`[1,2]`, "", "must be a mapping"},
	} {
		_, err := asset.DecodeDatastore([]byte(tc.doc))
		if err == nil {
			t.Errorf("%s: accepted", tc.doc)
			continue
		}
		if core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) != tc.field || !strings.Contains(err.Error(), tc.words) {
			t.Errorf("%s: %v (field %q), want field %q and %q", tc.doc, err, core.ErrorField(err), tc.field, tc.words)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error quotes the secret: %v", tc.doc, err)
		}
	}
}

// A printed spec or credential never shows a secret, whatever the verb.
func TestCredentialsNeverPrinted(t *testing.T) {
	c := asset.Credentials{AccountKey: "KEY1", SASToken: "SAS1", ClientSecret: "CS1", SecretAccessKey: "SK1", AccessKeyID: "AKID"}
	spec := asset.DatastoreSpec{Datastore: asset.Datastore{Name: "d"}, Credentials: c}
	var logs strings.Builder
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	log.Info("create", "spec", spec, "creds", c, "ptr", &spec)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("create", "spec", spec, "creds", c)
	for _, s := range []string{"KEY1", "SAS1", "CS1", "SK1"} {
		if strings.Contains(logs.String(), s) {
			t.Errorf("a log line shows %s: %s", s, logs.String())
		}
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		for _, v := range []any{c, &c, spec, &spec} {
			out := fmt.Sprintf(verb, v)
			for _, s := range []string{"KEY1", "SAS1", "CS1", "SK1"} {
				if strings.Contains(out, s) {
					t.Errorf("%s of %T shows %s: %s", verb, v, s, out)
				}
			}
		}
	}
}

// The built-ins are Shoal's file store, workspaceblobstore the default.
func TestBuiltinDatastores(t *testing.T) {
	var def []string
	for _, d := range asset.BuiltinDatastores("ws", time.Unix(0, 0)) {
		if !asset.IsBuiltinDatastore(d.Name) || d.AccountName != "shoal" || d.ContainerName != d.Name {
			t.Errorf("built-in %+v", d)
		}
		if d.IsDefault {
			def = append(def, d.Name)
		}
	}
	if len(def) != 1 || def[0] != asset.WorkspaceBlobStore {
		t.Errorf("defaults %v", def)
	}
	if !asset.IsBuiltinDatastore("WorkspaceBlobStore") || asset.IsBuiltinDatastore("mystore") {
		t.Error("IsBuiltinDatastore")
	}
}
