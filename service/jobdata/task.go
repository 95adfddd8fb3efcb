package jobdata

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/service/agentapi"
	"github.com/shoal-ml/shoal/service/datastores"
	"github.com/shoal-ml/shoal/store"
)

// When a rank's task is handed to its node, the server says where each
// remote input comes from and where each output bound for another
// datastore goes (node.DataSource), with the owning datastore's
// credentials opened: they leave the server only inside the task. What
// cannot be resolved any more (a datastore or asset deleted since the
// job was submitted, credentials this server cannot open) is the job's
// failure, not the node's: an agentapi.TaskFailure.

// inputFailed is an input or output of a job that cannot be resolved
// when its rank is handed over: the job fails at once with these words
// (node.RankInputFailed), spending no retry.
func inputFailed(format string, args ...any) error {
	return &agentapi.TaskFailure{Failure: node.RankInputFailed, Msg: fmt.Sprintf(format, args...)}
}

// Task fills t's InputSources and OutputTargets for job j.
func Task(tx store.Tx, key *sealing.Key, j *job.Job, t *node.AgentTask) error {
	for _, name := range core.SortedKeys(j.Inputs) {
		in := j.Inputs[name]
		if in == nil || in.Path == "" || !jobio.IsPathType(in.Type) || !jobio.PathKind(in.Path).Remote() {
			continue // literals and uploads travel as ever
		}
		src, err := InputSource(tx, key, j.Workspace, in)
		if err != nil {
			return inputFailed("input %s (%s): %s", name, core.Short(in.Path), failureWords(err))
		}
		if t.InputSources == nil {
			t.InputSources = map[string]*node.DataSource{}
		}
		t.InputSources[name] = src
	}
	for _, name := range core.SortedKeys(j.Outputs) {
		o := j.Outputs[name]
		if o == nil || job.IsKeptArtifacts(j.Name, name, o) {
			continue
		}
		p := jobio.ExpandOutputPath(o.Path, j.Name, name)
		if o.Type == jobio.TypeURIFile {
			if t.OutputFiles == nil {
				t.OutputFiles = map[string]string{}
			}
			t.OutputFiles[name] = outputFileName(p, name)
		}
		u, err := asset.ParseDataURI(p)
		if err != nil {
			return inputFailed("output %s (%s): %s", name, core.Short(p), failureWords(err))
		}
		if u.Kind != asset.URIDatastore || asset.IsBuiltinDatastore(u.Datastore) {
			continue // kept by the server, as ever
		}
		dst, err := placeSource(tx, key, j.Workspace, u)
		if err != nil {
			return inputFailed("output %s (%s): %s", name, core.Short(p), failureWords(err))
		}
		if t.OutputTargets == nil {
			t.OutputTargets = map[string]*node.DataSource{}
		}
		t.OutputTargets[name] = dst
	}
	return nil
}

// outputFileName is the file a uri_file output's command writes: the
// last segment of its expanded path, or the output's name when the path
// is a folder (the default path ends in '/').
func outputFileName(path, output string) string {
	if strings.HasSuffix(path, "/") {
		return output
	}
	f := path[strings.LastIndex(path, "/")+1:]
	if f == "" || f == "." || f == ".." {
		return output
	}
	return f
}

// failureWords is an error's message without a leading "path: " that
// the URI parser's field errors carry.
func failureWords(err error) string {
	return strings.TrimPrefix(core.ErrorMessage(err), "path: ")
}

// InputSource resolves one remote input: an asset reference to the
// version recorded at submission (or, for a job submitted before that
// was recorded, resolved now) and then its path; a datastore URI or a
// URL as it is.
func InputSource(tx store.Tx, key *sealing.Key, workspace string, in *job.JobInput) (*node.DataSource, error) {
	p, recorded := in.Path, ""
	if jobio.PathKind(in.Path) == jobio.AssetRef {
		ref := *in
		if name, version, ok := strings.Cut(in.Asset, ":"); ok {
			ref.Path = "azureml:" + name + ":" + version
		}
		a, err := lookupInputAsset(tx, workspace, "path", &ref)
		if err != nil {
			return nil, err
		}
		p, recorded = a.Path, a.Name+":"+a.Version
	}
	u, err := asset.ParseDataURI(strings.TrimSpace(p))
	if err != nil {
		return nil, err
	}
	if u.Kind == asset.URILocal || u.Kind == asset.URIAsset {
		return nil, core.Errorf(core.EINVALID, "%s names no place to read: an asset's path is a datastore URI or a URL", core.Short(p))
	}
	src, err := placeSource(tx, key, workspace, u)
	if err != nil {
		return nil, err
	}
	if src.OutputOf != "" {
		if err := checkKeptOutput(tx, workspace, src); err != nil {
			return nil, err
		}
	}
	src.Asset = recorded
	return src, nil
}

// placeSource resolves where u is: Shoal's own file store (an upload, a
// job's kept output), or another datastore's container, bucket or folder
// with its credentials, or a URL no datastore owns (anonymous).
func placeSource(tx store.Tx, key *sealing.Key, workspace string, u asset.DataURI) (*node.DataSource, error) {
	if u.Kind == asset.URIDatastore && u.Workspace != "" && !strings.EqualFold(u.Workspace, workspace) {
		return nil, core.Errorf(core.EINVALID, "%s names workspace %s: a job reads the datastores of its own workspace (%s)", core.Short(u.Raw), u.Workspace, workspace)
	}
	d, sec, owned, err := datastores.ForURI(tx, key, workspace, u)
	if err != nil {
		return nil, err
	}
	if owned && asset.IsBuiltinDatastore(d.Name) {
		src, err := ShoalSource(d.Name, u)
		if core.ErrorCode(err) == core.ENOTFOUND && strings.EqualFold(d.Name, asset.WorkspaceBlobStore) {
			src, err := uploadedSource(tx, workspace, u, err)
			if core.ErrorCode(err) == core.ENOTFOUND {
				return declaredOutputSource(tx, workspace, u, err)
			}
			return src, err
		}
		return src, err
	}
	src := &node.DataSource{URI: u.Raw, Prefix: u.Path}
	if !owned {
		return anonymousSource(src, u)
	}
	src.Datastore = d.Name
	if !sec.IsZero() {
		c := sec
		src.Credentials = &c
	}
	if u.Kind == asset.URIHTTP {
		// A path-style URL under the datastore's own (Azurite, MinIO):
		// the path inside its container is what follows.
		base := d.BlobServiceURL() + "/" + d.Container() + "/"
		if d.Type == asset.DatastoreS3 {
			base = strings.TrimSuffix(d.EndpointURL, "/") + "/" + d.Bucket + "/"
		}
		bp, _ := url.Parse(base)
		up, _ := url.Parse(u.URL)
		if bp == nil || up == nil {
			return nil, core.Errorf(core.EINVALID, "%s is not a URL under datastore %s", core.Short(u.Raw), d.Name)
		}
		src.Prefix = strings.TrimPrefix(up.Path, bp.Path)
	}
	switch d.Type {
	case asset.DatastoreAzureBlob, asset.DatastoreADLSGen2:
		src.Kind, src.ServiceURL, src.Container = node.DataAzureBlob, d.BlobServiceURL(), d.Container()
		src.AllowHTTP = strings.HasPrefix(strings.ToLower(src.ServiceURL), "http://")
	case asset.DatastoreS3:
		src.Kind, src.ServiceURL, src.Container, src.Region = node.DataS3, d.EndpointURL, d.Bucket, d.Region
		if src.Region == "" {
			src.Region = asset.DefaultS3Region
		}
		src.AllowHTTP = strings.HasPrefix(strings.ToLower(d.EndpointURL), "http://")
	case asset.DatastoreNFS:
		src.Kind, src.Root = node.DataNFS, d.Path
	default:
		return nil, core.Errorf(core.EINVALID, "datastore %s is of type %s, which no job reads", d.Name, d.Type)
	}
	return src, nil
}

// anonymousSource is a URL no datastore of the workspace owns: read
// without credentials.
func anonymousSource(src *node.DataSource, u asset.DataURI) (*node.DataSource, error) {
	switch u.Kind {
	case asset.URIBlob, asset.URIADLS:
		src.Kind, src.Container = node.DataAzureBlob, u.Container
		src.ServiceURL = "https://" + u.Account + ".blob." + u.EndpointSuffix
	case asset.URIS3:
		src.Kind, src.Container, src.Region = node.DataS3, u.Bucket, asset.DefaultS3Region
	case asset.URIHTTP:
		src.Kind, src.ServiceURL, src.Prefix = node.DataHTTP, u.URL, ""
		src.AllowHTTP = u.Scheme == "http"
	default:
		return nil, core.Errorf(core.EINVALID, "%s names no place to read", core.Short(u.Raw))
	}
	return src, nil
}

// ShoalSource is a place on Shoal's own file store: an upload
// (workspaceblobstore LocalUpload/<hex>/), a job's kept output
// (workspaceblobstore azureml/<job>/<output>/) or a job's artifacts
// (workspaceartifactstore ExperimentRun/dcid.<job>/). Anything else on
// them holds nothing.
func ShoalSource(store string, u asset.DataURI) (*node.DataSource, error) {
	canon := "azureml://datastores/" + store + "/paths/" + u.Path
	src := &node.DataSource{Kind: node.DataShoal, URI: u.Raw, Datastore: store}
	if id, file, ok := asset.DataPathArtifact(canon); ok {
		src.Artifact, src.Prefix = id, file
		return src, nil
	}
	segs := strings.SplitN(u.Path, "/", 4)
	switch {
	case strings.EqualFold(store, asset.WorkspaceBlobStore) && len(segs) >= 3 && segs[0] == "azureml" && segs[1] != "" && segs[2] != "":
		src.OutputOf, src.Output = segs[1], segs[2]
		if len(segs) == 4 {
			src.Prefix = segs[3]
		}
		return src, nil
	case strings.EqualFold(store, asset.WorkspaceArtifactStore) && len(segs) >= 2 && segs[0] == "ExperimentRun" && strings.HasPrefix(segs[1], "dcid.") && len(segs[1]) > len("dcid."):
		src.OutputOf, src.Output = strings.TrimPrefix(segs[1], "dcid."), job.ArtifactsOutput
		src.Prefix = strings.Join(segs[2:], "/")
		return src, nil
	}
	return nil, core.Errorf(core.ENOTFOUND, "%s holds nothing: on %s Shoal keeps uploads (LocalUpload/<digest>/, and on workspaceblobstore what Azure's clients wrote through the Blob endpoint) and jobs' outputs (azureml/<job>/<output>/, ExperimentRun/dcid.<job>/)", core.Short(u.Raw), store)
}

// checkKeptOutput refuses a kept output of a job the workspace does not
// have, or that has no such output: the agent reads it through a route
// that is scoped to the task's workspace too.
func checkKeptOutput(tx store.Tx, workspace string, src *node.DataSource) error {
	j, err := tx.GetJob(workspace, src.OutputOf)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return core.Errorf(core.ENOTFOUND, "%s is the output of job %s, which workspace %s does not have", core.Short(src.URI), src.OutputOf, workspace)
	} else if err != nil {
		return err
	}
	if _, ok := j.Outputs[src.Output]; !ok {
		return core.Errorf(core.ENOTFOUND, "%s: job %s has no output %s (yet)", core.Short(src.URI), j.Name, src.Output)
	}
	return nil
}
