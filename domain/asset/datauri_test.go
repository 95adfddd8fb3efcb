package asset_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
)

// Every kind of data URI parses to its parts.
func TestParseDataURI(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want asset.DataURI
	}{
		{"azureml://datastores/workspaceblobstore/paths/azureml/job1/out/", asset.DataURI{Kind: asset.URIDatastore, Datastore: "workspaceblobstore", Path: "azureml/job1/out/"}},
		{"azureml://subscriptions/s1/resourcegroups/rg/workspaces/ws1/datastores/blob_example/paths/data/iris.csv",
			asset.DataURI{Kind: asset.URIDatastore, Workspace: "ws1", Datastore: "blob_example", Path: "data/iris.csv"}},
		{"azureml://subscriptions/s1/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/ws1/datastores/d/paths/p",
			asset.DataURI{Kind: asset.URIDatastore, Workspace: "ws1", Datastore: "d", Path: "p"}},
		{"azureml:iris:3", asset.DataURI{Kind: asset.URIAsset, Name: "iris", Version: "3"}},
		{"azureml:iris@latest", asset.DataURI{Kind: asset.URIAsset, Name: "iris", Label: "latest"}},
		{"azureml://subscriptions/s/resourcegroups/rg/workspaces/w/data/iris/versions/2", asset.DataURI{Kind: asset.URIAsset, Workspace: "w", AssetType: "data", Name: "iris", Version: "2"}},
		{"azureml://models/net/versions/1", asset.DataURI{Kind: asset.URIAsset, AssetType: "model", Name: "net", Version: "1"}},
		{"https://acct.blob.core.windows.net/data/iris.csv", asset.DataURI{Kind: asset.URIBlob, Scheme: "https", Account: "acct", EndpointSuffix: "core.windows.net", Container: "data", Path: "iris.csv", URL: "https://acct.blob.core.windows.net/data/iris.csv"}},
		{"wasbs://data@acct.blob.core.windows.net/folder/", asset.DataURI{Kind: asset.URIBlob, Scheme: "wasbs", Account: "acct", EndpointSuffix: "core.windows.net", Container: "data", Path: "folder/"}},
		{"abfss://fs1@acct.dfs.core.windows.net/a/b", asset.DataURI{Kind: asset.URIADLS, Scheme: "abfss", Account: "acct", EndpointSuffix: "core.windows.net", Container: "fs1", Path: "a/b"}},
		{"s3://bkt/key/part", asset.DataURI{Kind: asset.URIS3, Scheme: "s3", Bucket: "bkt", Path: "key/part"}},
		{"https://example.com/x/iris.csv", asset.DataURI{Kind: asset.URIHTTP, Scheme: "https", URL: "https://example.com/x/iris.csv", Path: "x/iris.csv"}},
		{"http://10.1.2.3:10000/devstoreaccount1/data/f", asset.DataURI{Kind: asset.URIHTTP, Scheme: "http", URL: "http://10.1.2.3:10000/devstoreaccount1/data/f", Path: "devstoreaccount1/data/f"}},
		{"./data", asset.DataURI{Kind: asset.URILocal, Path: "./data"}},
		{"../../data/iris.csv", asset.DataURI{Kind: asset.URILocal, Path: "../../data/iris.csv"}},
		{"file:data", asset.DataURI{Kind: asset.URILocal, Path: "data"}},
	} {
		got, err := asset.ParseDataURI(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		tc.want.Raw = tc.in
		if got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.in, got, tc.want)
		}
	}
}

// Hostile and malformed URIs are refused naming the field path.
func TestParseDataURIRefusals(t *testing.T) {
	for _, tc := range []struct{ in, words string }{
		{"", "is required"},
		{"azureml://datastores/d/paths/a/../../etc/passwd", "'..'"},
		{"azureml://datastores/d/paths/a/%2e%2e/x", "'..'"},
		{"azureml://datastores/d/paths/a/%252e%252e/x", "'..'"},
		{"https://example.com/a/../b", "'..'"},
		{"s3://bkt/a\\b", "backslashes"},
		{"s3://bkt/a%5cb", "backslashes"},
		{"azureml://datastores/d/paths/a\x00b", "NUL"},
		{"azureml://datastores/d/paths/a%00b", "NUL"},
		{"./data\x00", "NUL"},
		{"azureml:iris", "names no version"},
		{"azureml:iris@best", "label"},
		{"azureml:iris:", "version"},
		{"azureml://datastores/d", "datastore path"},
		{"azureml://registries/r/models/m/versions/1", "registry"},
		{"azureml://data/iris/versions", "asset version"},
		{"azureml://subscriptions/s", "subscriptions"},
		{"azureml://jobs/x", "not a datastore path"},
		{"gs://bucket/key", "scheme gs://"},
		{"s3://B/key", "bucket"},
		{"wasbs://acct.blob.core.windows.net/x", "is not wasbs://"},
		{"abfss://fs@acct.blob.core.windows.net/x", "is not abfss://"},
		{"https://user:pw@example.com/x", "user info"},
		{"https://", "with a host"},
	} {
		_, err := asset.ParseDataURI(tc.in)
		if err == nil {
			t.Errorf("%q: accepted", tc.in)
			continue
		}
		if core.ErrorField(err) != "path" || !strings.Contains(err.Error(), tc.words) {
			t.Errorf("%q: %v, want field path and %q", tc.in, err, tc.words)
		}
	}
}

// A URL's credentials come from the datastore of its account and
// container, bucket, or path-style service URL; none found: anonymous.
func TestOwningDatastore(t *testing.T) {
	dec := func(doc string) *asset.Datastore {
		s, err := asset.DecodeDatastore([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return &s.Datastore
	}
	blob := dec(`{"name":"blob","type":"azure_blob","account_name":"acct","container_name":"data"}`)
	other := dec(`{"name":"other","type":"azure_blob","account_name":"acct","container_name":"other"}`)
	lake := dec(`{"name":"lake","type":"azure_data_lake_gen2","account_name":"acct","filesystem":"fs1"}`)
	azurite := dec(`{"name":"azurite","type":"azure_blob","account_name":"devstoreaccount1","container_name":"data","endpoint":"http://10.1.2.3:10000/devstoreaccount1"}`)
	minio := dec(`{"name":"minio","type":"s3","bucket":"bkt","endpoint_url":"http://10.0.0.5:9000"}`)
	list := []*asset.Datastore{other, blob, lake, azurite, minio}
	for _, tc := range []struct{ uri, want string }{
		{"https://acct.blob.core.windows.net/data/iris.csv", "blob"},
		{"https://ACCT.blob.core.windows.net/other/x", "other"},
		{"wasbs://data@acct.blob.core.windows.net/f/", "blob"},
		{"https://acct.blob.core.chinacloudapi.cn/data/iris.csv", ""},
		{"https://acct2.blob.core.windows.net/data/iris.csv", ""},
		{"abfss://fs1@acct.dfs.core.windows.net/a", "lake"},
		{"s3://bkt/k", "minio"},
		{"s3://nobkt/k", ""},
		{"http://10.1.2.3:10000/devstoreaccount1/data/f", "azurite"},
		{"http://10.1.2.3:10000/devstoreaccount1/datax/f", ""},
		{"http://10.0.0.5:9000/bkt/k", "minio"},
		{"https://example.com/bkt/k", ""},
		{"azureml://datastores/MINIO/paths/x", "minio"},
		{"azureml://datastores/none/paths/x", ""},
	} {
		u, err := asset.ParseDataURI(tc.uri)
		if err != nil {
			t.Fatalf("%s: %v", tc.uri, err)
		}
		got := ""
		if d := asset.OwningDatastore(u, list); d != nil {
			got = d.Name
		}
		if got != tc.want {
			t.Errorf("%s: owned by %q, want %q", tc.uri, got, tc.want)
		}
	}
}

// FuzzParseDataURI: no input panics, and no accepted remote URI keeps a
// '..' segment, a NUL or a backslash in its path.
func FuzzParseDataURI(f *testing.F) {
	for _, s := range []string{"azureml://datastores/d/paths/p", "azureml:x:1", "azureml:x@latest", "https://a.blob.core.windows.net/c/p",
		"wasbs://c@acct.blob.x/p", "abfss://f@acct.dfs.x/p", "s3://b/k", "http://h/p", "./p", "azureml://subscriptions/s/resourcegroups/r/workspaces/w/data/n/versions/1", "%2e%2e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := asset.ParseDataURI(s)
		if err != nil {
			if core.ErrorField(err) != "path" {
				t.Fatalf("%q: error without the field: %v", s, err)
			}
			return
		}
		if strings.ContainsRune(u.Path, 0) {
			t.Fatalf("%q: NUL in path", s)
		}
		if u.Kind == asset.URILocal {
			return
		}
		for _, seg := range strings.Split(u.Path, "/") {
			if seg == ".." {
				t.Fatalf("%q: '..' kept in %+v", s, u)
			}
		}
		if strings.Contains(u.Path, `\`) {
			t.Fatalf("%q: backslash kept", s)
		}
	})
}
