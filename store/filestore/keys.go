package filestore

import (
	"fmt"
	"path"
)

// The keys below name each kind of file, checked the same way in every
// file store (a name is one path component): this one's paths under its
// directory, and the PostgreSQL store's keys.

// ArtifactKey is the key of a workspace's artifact
// ("artifacts/<workspace>/<hex>.tar.gz").
func ArtifactKey(workspace, id string) (string, error) { return artifactPath(workspace, id) }

// LegacyArtifactKey is where an artifact was kept before artifacts were
// kept per workspace ("artifacts/<hex>.tar.gz"); id must be valid.
func LegacyArtifactKey(id string) string { return legacyArtifactPath(id) }

// LogKey is the key of a rank's log.
func LogKey(workspace, job string, attempt, rank int) (string, error) {
	dir, err := attemptDir("logs", workspace, job, attempt)
	if err != nil {
		return "", err
	}
	return path.Join(dir, fmt.Sprintf("rank-%d.log", rank)), nil
}

// OutputsKey is the key of a rank's output archive.
func OutputsKey(workspace, job string, attempt, rank int) (string, error) {
	dir, err := attemptDir("outputs", workspace, job, attempt)
	if err != nil {
		return "", err
	}
	return path.Join(dir, fmt.Sprintf("rank-%d.tar.gz", rank)), nil
}

// InstanceDir is the key prefix of an instance's files; InstanceLogKey
// the key of its setup log.
func InstanceDir(workspace, instance string) (string, error) { return instanceDir(workspace, instance) }

// InstanceAppLogKey is the key of the log of an instance's custom
// application: a folder of their own, so that no application's name can
// meet the setup log's.
func InstanceAppLogKey(workspace, instance, app string) (string, error) {
	dir, err := instanceDir(workspace, instance)
	if err != nil {
		return "", err
	}
	if err := checkName("application", app); err != nil {
		return "", err
	}
	return path.Join(dir, "apps", app+".log"), nil
}

// InstanceLogKey is the key of an instance's setup log.
func InstanceLogKey(workspace, instance string) (string, error) {
	dir, err := instanceDir(workspace, instance)
	if err != nil {
		return "", err
	}
	return path.Join(dir, "setup.log"), nil
}
