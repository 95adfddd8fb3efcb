package cli

import (
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/domain/asset"
)

// decodeFileAssetBlock decodes a data asset's or model's YAML block as
// `shoal data create -f` and `shoal model create -f` send it: the version
// as text, a local path replaced by the URI of its upload.
func decodeFileAssetBlock(kind string, doc map[string]any) error {
	if v, ok := doc["version"]; ok && v != nil {
		doc["version"] = fmt.Sprint(v)
	}
	if p, _ := doc["path"].(string); p != "" && !isRemotePath(p) {
		inner := ""
		if t, _ := doc["type"].(string); strings.EqualFold(t, asset.DataURIFile) {
			inner = "file"
		}
		uri, err := asset.ArtifactDataPath(localPathStandIn, inner)
		if err != nil {
			return err
		}
		doc["path"] = uri
	}
	js, err := cmdutil.ToJSON(doc)
	if err != nil {
		return err
	}
	if kind == "data" {
		d, err := asset.DecodeData(js)
		if err != nil {
			return err
		}
		return asset.NormalizeData(d)
	}
	m, err := asset.DecodeModel(js)
	if err != nil {
		return err
	}
	return asset.NormalizeModel(m)
}
