package assettest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// assetCase is what testAssets needs of a kind: two versions of WS/Train
// and a minimal version of any name, from which it builds the rest.
type assetCase[T asset.Asset] struct {
	// first is WS/Train version 1, with every field the kind has set.
	first T
	// second is WS/Train version 0.9, created after first but smaller as
	// a string and a number: latest follows creation, not the value.
	second T
	// plain returns a minimal version.
	plain func(ws, name, version string) T
}

// testEnvironments runs testAssets over environments.
func testEnvironments(t *testing.T, s store.Store, clock *stcheck.Clock) {
	plain := func(ws, name, version string) *asset.Environment {
		return &asset.Environment{Workspace: ws, Name: name, Version: version, Image: "python:3.11"}
	}
	testAssets(t, s, assetCase[*asset.Environment]{
		first: &asset.Environment{Workspace: "WS", Name: "Train", Version: "1", Description: "base", Tags: map[string]string{"team": "a"},
			Image: "localhost:5000/team/train:3", CondaFile: "dependencies:\n- python=3.11\n", OSType: asset.OSTypeLinux, CreatedBy: "alice"},
		second: &asset.Environment{Workspace: "WS", Name: "Train", Version: "0.9",
			Build: &asset.EnvironmentBuild{Path: "sha256:" + strings.Repeat("a", 64), DockerfilePath: "docker/Dockerfile"}, OSType: asset.OSTypeLinux},
		plain: plain,
	})
}

// testComponents runs testAssets over components, whose documents hold
// numbers that must read back as written (a default stays 10, not 10.0).
func testComponents(t *testing.T, s store.Store, clock *stcheck.Clock) {
	det := true
	plain := func(ws, name, version string) *job.Component {
		return &job.Component{Workspace: ws, Name: name, Version: version, Type: "command", Command: "echo"}
	}
	testAssets(t, s, assetCase[*job.Component]{
		first: &job.Component{Workspace: "WS", Name: "Train", Version: "1", Type: "command", Description: "base", Tags: map[string]string{"team": "a"},
			IsDeterministic: &det, Command: "python train.py --data ${{inputs.data}} $[[--lr ${{inputs.lr}}]] --out ${{outputs.model}}",
			Inputs: map[string]*job.ComponentInput{
				"data":   {Type: job.InputTypeURIFolder},
				"lr":     {Type: job.InputTypeNumber, Optional: true, Default: json.Number("0.01")},
				"epochs": {Type: job.InputTypeInteger, Default: json.Number("10"), Min: stcheck.Ptr(1.0), Max: stcheck.Ptr(100.0)},
				"kind":   {Type: job.InputTypeString, Enum: []string{"a", "b"}},
			},
			Outputs:     map[string]*job.ComponentOutput{"model": {Type: job.InputTypeURIFolder}},
			Environment: map[string]any{"image": "python:3.11"}, EnvironmentVariables: map[string]string{"A": "1"},
			Resources: &job.JobResources{InstanceCount: 1}, CreatedBy: "alice"},
		second: &job.Component{Workspace: "WS", Name: "Train", Version: "0.9", Type: "command", Command: "echo", Environment: "azureml:sk:1"},
		plain:  plain,
	})
}

// testAssets checks the store's versioned assets of one kind: versions
// read back as written, per workspace and name (compared
// case-insensitively, the version exactly); a version cannot be written
// twice; the latest is the one created last that is not archived;
// archiving one version or a whole name changes lists and latest.
func testAssets[T asset.Asset](t *testing.T, s store.Store, c assetCase[T]) {
	kind := asset.KindOf[T]()
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, a := range []T{c.first, c.second, c.plain("WS", "infer", "1"), c.plain("other", "train", "7")} {
			if err := tx.InsertAsset(a); err != nil {
				return err
			}
		}
		return nil
	})
	if got, want := c.first.AssetMeta().CreatedOn, stcheck.Now(stcheck.Start); !got.Equal(want) || got.Location() != want.Location() {
		t.Errorf("%s: CreatedOn = %v, want the transaction time %v", kind, got, want)
	}
	err := s.Update(t.Context(), func(tx store.Tx) error { return tx.InsertAsset(c.plain("ws", "TRAIN", "1")) })
	stcheck.WantCode(t, "InsertAsset of an existing version", err, core.ECONFLICT)

	get := func(ws, name, version string) (a T, err error) {
		err = s.View(t.Context(), func(tx store.Tx) (err error) {
			a, err = asset.GetAssetVersion[T](tx, ws, name, version)
			return err
		})
		return a, err
	}
	latest := func(ws, name string) (a T, err error) {
		err = s.View(t.Context(), func(tx store.Tx) (err error) {
			a, err = asset.LatestAssetVersion[T](tx, ws, name)
			return err
		})
		return a, err
	}
	version := func(a T, err error) string {
		if err != nil {
			return err.Error()
		}
		return a.AssetMeta().Version
	}
	list := func(f asset.AssetFilter) []string {
		var out []T
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			out, err = asset.ListAssetVersions[T](tx, f)
			return err
		})
		names := []string{}
		for _, a := range out {
			names = append(names, a.AssetMeta().Name+":"+a.AssetMeta().Version)
		}
		return names
	}
	if got, err := get("ws", "train", "1"); err != nil || !reflect.DeepEqual(got, c.first) {
		t.Errorf("%s: GetAsset = %s, %v; want %s", kind, stcheck.JSON(got), err, stcheck.JSON(c.first))
	}
	if got, err := get("ws", "train", "0.9"); err != nil || !reflect.DeepEqual(got, c.second) {
		t.Errorf("%s: GetAsset of 0.9 = %s, %v; want %s", kind, stcheck.JSON(got), err, stcheck.JSON(c.second))
	}
	_, err = get("ws", "train", "7")
	stcheck.WantCode(t, "GetAsset of another workspace's version", err, core.ENOTFOUND)
	if got := version(latest("ws", "TRAIN")); got != "0.9" {
		t.Errorf("%s: LatestAsset = %s; want version 0.9 (created last)", kind, got)
	}
	if got, want := list(asset.AssetFilter{Workspace: "ws"}), []string{"infer:1", "Train:0.9", "Train:1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("%s: ListAssets = %v, want %v", kind, got, want)
	}
	if got, want := list(asset.AssetFilter{Workspace: "Ws", Name: "train"}), []string{"Train:0.9", "Train:1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("%s: ListAssets of one name = %v, want %v", kind, got, want)
	}

	// Archiving the latest makes the one before it latest; it is still
	// read by version and listed when archived versions are asked for.
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.SetAssetArchived(kind, "ws", "train", "0.9", true) })
	if got := version(latest("ws", "train")); got != "1" {
		t.Errorf("%s: LatestAsset after archiving 0.9 = %s; want version 1", kind, got)
	}
	if got, err := get("ws", "train", "0.9"); err != nil || !got.AssetMeta().Archived {
		t.Errorf("%s: GetAsset of an archived version = %s, %v; want it, archived", kind, stcheck.JSON(got), err)
	}
	if got, want := list(asset.AssetFilter{Workspace: "ws", Name: "train"}), []string{"Train:1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("%s: ListAssets without archived = %v, want %v", kind, got, want)
	}
	if got, want := list(asset.AssetFilter{Workspace: "ws", Name: "train", Archived: true}), []string{"Train:0.9", "Train:1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("%s: ListAssets with archived = %v, want %v", kind, got, want)
	}

	// Archiving a name archives every version: no latest is left.
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.SetAssetArchived(kind, "WS", "Train", "", true) })
	_, err = latest("ws", "train")
	stcheck.WantCode(t, "LatestAsset with every version archived", err, core.ENOTFOUND)
	if got := version(latest("other", "train")); got != "7" {
		t.Errorf("%s: another workspace's asset of the same name = %s; want version 7, untouched", kind, got)
	}
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.SetAssetArchived(kind, "ws", "train", "1", false) })
	if got, err := latest("ws", "train"); err != nil || got.AssetMeta().Version != "1" || got.AssetMeta().Archived {
		t.Errorf("%s: LatestAsset after restoring 1 = %s, %v; want version 1", kind, stcheck.JSON(got), err)
	}
	err = s.Update(t.Context(), func(tx store.Tx) error { return tx.SetAssetArchived(kind, "ws", "train", "2", true) })
	stcheck.WantCode(t, "SetAssetArchived of a missing version", err, core.ENOTFOUND)
	err = s.Update(t.Context(), func(tx store.Tx) error { return tx.SetAssetArchived(kind, "ws", "nope", "", true) })
	stcheck.WantCode(t, "SetAssetArchived of a missing name", err, core.ENOTFOUND)
	_, err = latest("ws", "nope")
	stcheck.WantCode(t, "LatestAsset of a missing name", err, core.ENOTFOUND)
}
