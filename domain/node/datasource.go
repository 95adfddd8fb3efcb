package node

import "github.com/shoal-ml/shoal/domain/asset"

// Kinds of DataSource: where a rank's input comes from or its output
// goes.
const (
	// DataShoal is the workspace's own file store (workspaceblobstore,
	// workspaceartifactstore): reached through the agent API, as code
	// and uploaded inputs are (Artifact, or a job's kept output).
	DataShoal = "shoal"
	// DataAzureBlob is an Azure Blob container (azure_blob, and
	// azure_data_lake_gen2 through its account's Blob endpoint).
	DataAzureBlob = "azure_blob"
	// DataS3 is an S3-compatible bucket.
	DataS3 = "s3"
	// DataHTTP is a plain URL, fetched with a GET.
	DataHTTP = "http"
	// DataNFS is a folder mounted at the same path on every node.
	DataNFS = "nfs"
)

// DataSource is a rank's input or output place, resolved by the server
// when it hands the task over: which store, where in it, and the
// credentials of the datastore that owns it. Credentials leave the
// server only here, inside the task of a job that names the datastore,
// as registry logins do (ContainerTask); they are never part of a job's
// JSON, an event or a log line (asset.Credentials prints no secret).
type DataSource struct {
	// Kind is one of the Data* kinds.
	Kind string `json:"kind"`
	// URI is the place as users name it (azureml://datastores/<ds>/
	// paths/<p>, or the URL given): what a direct-mode input gets and
	// what messages say.
	URI string `json:"uri"`
	// Datastore names the datastore ("" for a URL no datastore owns).
	Datastore string `json:"datastore,omitempty"`
	// Asset is the data asset or model version the input came from
	// ("name:version"), for messages and the cache's key.
	Asset string `json:"asset,omitempty"`
	// Artifact (DataShoal) is the uploaded artifact's id; with
	// OutputOf, the job whose kept output Output is read.
	Artifact string `json:"artifact,omitempty"`
	OutputOf string `json:"output_of,omitempty"`
	Output   string `json:"output,omitempty"`
	// ServiceURL is the Blob service URL with its account, the S3
	// endpoint URL ("" for AWS), or the whole URL of DataHTTP.
	ServiceURL string `json:"service_url,omitempty"`
	// Container is the Blob container (or ADLS filesystem), or the S3
	// bucket; Region the S3 region.
	Container string `json:"container,omitempty"`
	Region    string `json:"region,omitempty"`
	// Prefix is the path inside the container, bucket or NFS root; a
	// trailing '/' is a folder.
	Prefix string `json:"prefix,omitempty"`
	// Root is DataNFS's mount path on the node.
	Root string `json:"root,omitempty"`
	// AllowHTTP lets a Blob datastore or URL be reached over plain HTTP
	// (a datastore with protocol http).
	AllowHTTP bool `json:"allow_http,omitempty"`
	// Credentials are the owning datastore's (nil: anonymous).
	Credentials *asset.Credentials `json:"credentials,omitempty"`
}
