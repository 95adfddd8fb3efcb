package storetest

import (
	"reflect"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal"
)

// Environment versions read back as written, per workspace and name
// (compared case-insensitively, the version exactly); a version cannot be
// written twice; the latest is the one created last that is not archived;
// archiving one version or a whole name changes lists and latest.
func testEnvironments(t *testing.T, s shoal.Store, clock *Clock) {
	img := &shoal.Environment{Workspace: "WS", Name: "Train", Version: "1", Description: "base", Tags: map[string]string{"team": "a"},
		Image: "localhost:5000/team/train:3", CondaFile: "dependencies:\n- python=3.11\n", OSType: shoal.OSTypeLinux, CreatedBy: "alice"}
	// Created after 1 but smaller as a string and a number: latest follows
	// creation, not the version's value.
	built := &shoal.Environment{Workspace: "WS", Name: "Train", Version: "0.9",
		Build: &shoal.EnvironmentBuild{Path: "sha256:" + strings.Repeat("a", 64), DockerfilePath: "docker/Dockerfile"}, OSType: shoal.OSTypeLinux}
	other := &shoal.Environment{Workspace: "WS", Name: "infer", Version: "1", Image: "python:3.11"}
	elsewhere := &shoal.Environment{Workspace: "other", Name: "train", Version: "7", Image: "python:3.12"}
	update(t, s, func(tx shoal.Tx) error {
		for _, e := range []*shoal.Environment{img, built, other, elsewhere} {
			if err := tx.InsertEnvironment(e); err != nil {
				return err
			}
		}
		return nil
	})
	if want := now(Start); !img.CreatedOn.Equal(want) || img.CreatedOn.Location() != want.Location() {
		t.Errorf("CreatedOn = %v, want the transaction time %v", img.CreatedOn, want)
	}
	err := s.Update(t.Context(), func(tx shoal.Tx) error {
		return tx.InsertEnvironment(&shoal.Environment{Workspace: "ws", Name: "TRAIN", Version: "1", Image: "x"})
	})
	wantCode(t, "InsertEnvironment of an existing version", err, shoal.ECONFLICT)

	get := func(ws, name, version string) (*shoal.Environment, error) {
		var e *shoal.Environment
		err := s.View(t.Context(), func(tx shoal.Tx) (err error) {
			e, err = tx.GetEnvironment(ws, name, version)
			return err
		})
		return e, err
	}
	latest := func(ws, name string) (*shoal.Environment, error) {
		var e *shoal.Environment
		err := s.View(t.Context(), func(tx shoal.Tx) (err error) {
			e, err = tx.LatestEnvironment(ws, name)
			return err
		})
		return e, err
	}
	list := func(f shoal.EnvironmentFilter) []string {
		var out []*shoal.Environment
		view(t, s, func(tx shoal.Tx) (err error) {
			out, err = tx.ListEnvironments(f)
			return err
		})
		names := []string{}
		for _, e := range out {
			names = append(names, e.Name+":"+e.Version)
		}
		return names
	}
	if got, err := get("ws", "train", "1"); err != nil || !reflect.DeepEqual(got, img) {
		t.Errorf("GetEnvironment = %s, %v; want %s", js(got), err, js(img))
	}
	if got, err := get("ws", "train", "0.9"); err != nil || !reflect.DeepEqual(got, built) {
		t.Errorf("GetEnvironment of the build = %s, %v; want %s", js(got), err, js(built))
	}
	_, err = get("ws", "train", "7")
	wantCode(t, "GetEnvironment of another workspace's version", err, shoal.ENOTFOUND)
	if got, err := latest("ws", "TRAIN"); err != nil || got.Version != "0.9" {
		t.Errorf("LatestEnvironment = %s, %v; want version 0.9 (created last)", js(got), err)
	}
	if got, want := list(shoal.EnvironmentFilter{Workspace: "ws"}), []string{"infer:1", "Train:0.9", "Train:1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ListEnvironments = %v, want %v", got, want)
	}
	if got, want := list(shoal.EnvironmentFilter{Workspace: "Ws", Name: "train"}), []string{"Train:0.9", "Train:1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ListEnvironments of one name = %v, want %v", got, want)
	}

	// Archiving the latest makes the one before it latest; it is still
	// read by version and listed when archived versions are asked for.
	update(t, s, func(tx shoal.Tx) error { return tx.SetEnvironmentArchived("ws", "train", "0.9", true) })
	if got, err := latest("ws", "train"); err != nil || got.Version != "1" {
		t.Errorf("LatestEnvironment after archiving 0.9 = %s, %v; want version 1", js(got), err)
	}
	if got, err := get("ws", "train", "0.9"); err != nil || !got.Archived {
		t.Errorf("GetEnvironment of an archived version = %s, %v; want it, archived", js(got), err)
	}
	if got, want := list(shoal.EnvironmentFilter{Workspace: "ws", Name: "train"}), []string{"Train:1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ListEnvironments without archived = %v, want %v", got, want)
	}
	if got, want := list(shoal.EnvironmentFilter{Workspace: "ws", Name: "train", Archived: true}), []string{"Train:0.9", "Train:1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ListEnvironments with archived = %v, want %v", got, want)
	}

	// Archiving a name archives every version: no latest is left.
	update(t, s, func(tx shoal.Tx) error { return tx.SetEnvironmentArchived("WS", "Train", "", true) })
	_, err = latest("ws", "train")
	wantCode(t, "LatestEnvironment with every version archived", err, shoal.ENOTFOUND)
	if got, err := latest("other", "train"); err != nil || got.Version != "7" {
		t.Errorf("another workspace's environment of the same name = %s, %v; want version 7, untouched", js(got), err)
	}
	update(t, s, func(tx shoal.Tx) error { return tx.SetEnvironmentArchived("ws", "train", "1", false) })
	if got, err := latest("ws", "train"); err != nil || got.Version != "1" || got.Archived {
		t.Errorf("LatestEnvironment after restoring 1 = %s, %v; want version 1", js(got), err)
	}
	err = s.Update(t.Context(), func(tx shoal.Tx) error { return tx.SetEnvironmentArchived("ws", "train", "2", true) })
	wantCode(t, "SetEnvironmentArchived of a missing version", err, shoal.ENOTFOUND)
	err = s.Update(t.Context(), func(tx shoal.Tx) error { return tx.SetEnvironmentArchived("ws", "nope", "", true) })
	wantCode(t, "SetEnvironmentArchived of a missing name", err, shoal.ENOTFOUND)
	_, err = latest("ws", "nope")
	wantCode(t, "LatestEnvironment of a missing name", err, shoal.ENOTFOUND)
}
