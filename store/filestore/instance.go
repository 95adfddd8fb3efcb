package filestore

import (
	"io"
	"path"
	"strings"
)

// instanceDir is the folder of a compute instance's files.
func instanceDir(workspace, instance string) (string, error) {
	if err := checkName("workspace", workspace); err != nil {
		return "", err
	}
	if err := checkName("instance", instance); err != nil {
		return "", err
	}
	return path.Join("instances", strings.ToLower(workspace), strings.ToLower(instance)), nil
}

// WriteInstanceLog writes data at offset of a compute instance's setup
// log (its setup scripts' output), as WriteLog does for jobs.
func (s *Store) WriteInstanceLog(workspace, instance string, offset int64, data []byte) error {
	return noSpace(s.writeInstanceLog(workspace, instance, offset, data))
}

func (s *Store) writeInstanceLog(workspace, instance string, offset int64, data []byte) error {
	dir, err := instanceDir(workspace, instance)
	if err != nil {
		return err
	}
	if err := s.root.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return s.writeAt(workspace, path.Join(dir, "setup.log"), offset, data)
}

// OpenInstanceLog opens a compute instance's setup log. Returns ENOTFOUND.
func (s *Store) OpenInstanceLog(workspace, instance string) (io.ReadSeekCloser, error) {
	dir, err := instanceDir(workspace, instance)
	if err != nil {
		return nil, err
	}
	return s.open(path.Join(dir, "setup.log"), "setup log of compute instance "+instance)
}

// WriteInstanceAppLog writes data at offset of the log of an instance's
// custom application.
func (s *Store) WriteInstanceAppLog(workspace, instance, app string, offset int64, data []byte) error {
	key, err := InstanceAppLogKey(workspace, instance, app)
	if err != nil {
		return err
	}
	if err := s.root.MkdirAll(path.Dir(key), 0o700); err != nil {
		return noSpace(err)
	}
	return noSpace(s.writeAt(workspace, key, offset, data))
}

// OpenInstanceAppLog opens the log of an instance's custom application.
// Returns ENOTFOUND.
func (s *Store) OpenInstanceAppLog(workspace, instance, app string) (io.ReadSeekCloser, error) {
	key, err := InstanceAppLogKey(workspace, instance, app)
	if err != nil {
		return nil, err
	}
	return s.open(key, "log of application "+app+" of compute instance "+instance)
}

// RemoveInstanceFiles removes a deleted instance's files.
func (s *Store) RemoveInstanceFiles(workspace, instance string) error {
	dir, err := instanceDir(workspace, instance)
	if err != nil {
		return err
	}
	return s.forget(workspace, func() error { return s.root.RemoveAll(dir) })
}
