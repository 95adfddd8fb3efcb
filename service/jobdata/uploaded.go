package jobdata

import (
	"strings"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// uploadedSource is a place on workspaceblobstore that Azure's clients
// uploaded blob by blob through Shoal's Blob endpoint (a data asset that
// azure-ai-ml registered from a local path: LocalUpload/<hash>/iris.csv,
// or any folder a client wrote): one blob named place, or the blobs
// under it as a folder. The node reads it through the agent API as one
// archive, as it reads a job's kept output (Container names the store,
// OutputOf and Artifact stay empty). A place that holds no blob is
// notFound, ShoalSource's words.
func uploadedSource(tx store.Tx, workspace string, u asset.DataURI, notFound error) (*node.DataSource, error) {
	place := u.Path
	folder := strings.TrimSuffix(place, "/") + "/"
	marker := ""
	for {
		page, err := tx.ListBlobs(workspace, asset.WorkspaceBlobStore, strings.TrimSuffix(place, "/"), marker, 100)
		if err != nil {
			return nil, err
		}
		for _, b := range page {
			if (b.Name == place && !strings.HasSuffix(place, "/")) || strings.HasPrefix(b.Name, folder) {
				return &node.DataSource{Kind: node.DataShoal, URI: u.Raw, Datastore: asset.WorkspaceBlobStore,
					Container: asset.WorkspaceBlobStore, Prefix: place}, nil
			}
		}
		if len(page) < 100 {
			return nil, notFound
		}
		marker = page[len(page)-1].Name
	}
}
