package storetest

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/shoal-ml/shoal"
)

// Component versions read back as written (a default stays the number it
// was), per workspace and name (compared case-insensitively, the version
// exactly); a version cannot be written twice; the latest is the one
// created last that is not archived; archiving one version or a whole
// name changes lists and latest.
func testComponents(t *testing.T, s shoal.Store, clock *Clock) {
	det := true
	v1 := &shoal.Component{Workspace: "WS", Name: "Train", Version: "1", Type: "command", Description: "base", Tags: map[string]string{"team": "a"},
		IsDeterministic: &det, Command: "python train.py --data ${{inputs.data}} $[[--lr ${{inputs.lr}}]] --out ${{outputs.model}}",
		Inputs: map[string]*shoal.ComponentInput{
			"data":   {Type: shoal.InputTypeURIFolder},
			"lr":     {Type: shoal.InputTypeNumber, Optional: true, Default: json.Number("0.01")},
			"epochs": {Type: shoal.InputTypeInteger, Default: json.Number("10"), Min: ptr(1.0), Max: ptr(100.0)},
			"kind":   {Type: shoal.InputTypeString, Enum: []string{"a", "b"}},
		},
		Outputs:     map[string]*shoal.ComponentOutput{"model": {Type: shoal.InputTypeURIFolder}},
		Environment: map[string]any{"image": "python:3.11"}, EnvironmentVariables: map[string]string{"A": "1"},
		Resources: &shoal.JobResources{InstanceCount: 1}, CreatedBy: "alice"}
	// Created after 1 but smaller: latest follows creation.
	v09 := &shoal.Component{Workspace: "WS", Name: "Train", Version: "0.9", Type: "command", Command: "echo", Environment: "azureml:sk:1"}
	other := &shoal.Component{Workspace: "WS", Name: "infer", Version: "1", Type: "command", Command: "echo"}
	elsewhere := &shoal.Component{Workspace: "other", Name: "train", Version: "7", Type: "command", Command: "echo"}
	update(t, s, func(tx shoal.Tx) error {
		for _, c := range []*shoal.Component{v1, v09, other, elsewhere} {
			if err := tx.InsertComponent(c); err != nil {
				return err
			}
		}
		return nil
	})
	if want := now(Start); !v1.CreatedOn.Equal(want) {
		t.Errorf("CreatedOn = %v, want the transaction time %v", v1.CreatedOn, want)
	}
	err := s.Update(t.Context(), func(tx shoal.Tx) error {
		return tx.InsertComponent(&shoal.Component{Workspace: "ws", Name: "TRAIN", Version: "1", Type: "command", Command: "other"})
	})
	wantCode(t, "InsertComponent of an existing version", err, shoal.ECONFLICT)

	get := func(ws, name, version string) (c *shoal.Component, err error) {
		err = s.View(t.Context(), func(tx shoal.Tx) (err error) {
			c, err = tx.GetComponent(ws, name, version)
			return err
		})
		return c, err
	}
	latest := func(ws, name string) (c *shoal.Component, err error) {
		err = s.View(t.Context(), func(tx shoal.Tx) (err error) {
			c, err = tx.LatestComponent(ws, name)
			return err
		})
		return c, err
	}
	list := func(f shoal.ComponentFilter) []string {
		var out []*shoal.Component
		view(t, s, func(tx shoal.Tx) (err error) {
			out, err = tx.ListComponents(f)
			return err
		})
		names := []string{}
		for _, c := range out {
			names = append(names, c.Name+":"+c.Version)
		}
		return names
	}
	if got, err := get("ws", "train", "1"); err != nil || !reflect.DeepEqual(got, v1) {
		t.Errorf("GetComponent = %s, %v; want %s", js(got), err, js(v1))
	}
	_, err = get("ws", "train", "7")
	wantCode(t, "GetComponent of another workspace's version", err, shoal.ENOTFOUND)
	if got, err := latest("ws", "TRAIN"); err != nil || got.Version != "0.9" {
		t.Errorf("LatestComponent = %s, %v; want version 0.9 (created last)", js(got), err)
	}
	if got, want := list(shoal.ComponentFilter{Workspace: "ws"}), []string{"infer:1", "Train:0.9", "Train:1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ListComponents = %v, want %v", got, want)
	}
	if got, want := list(shoal.ComponentFilter{Workspace: "Ws", Name: "train"}), []string{"Train:0.9", "Train:1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ListComponents of one name = %v, want %v", got, want)
	}

	update(t, s, func(tx shoal.Tx) error { return tx.SetComponentArchived("ws", "train", "0.9", true) })
	if got, err := latest("ws", "train"); err != nil || got.Version != "1" {
		t.Errorf("LatestComponent after archiving 0.9 = %s, %v; want version 1", js(got), err)
	}
	if got, err := get("ws", "train", "0.9"); err != nil || !got.Archived {
		t.Errorf("GetComponent of an archived version = %s, %v; want it, archived", js(got), err)
	}
	if got, want := list(shoal.ComponentFilter{Workspace: "ws", Name: "train"}), []string{"Train:1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ListComponents without archived = %v, want %v", got, want)
	}
	if got, want := list(shoal.ComponentFilter{Workspace: "ws", Name: "train", Archived: true}), []string{"Train:0.9", "Train:1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ListComponents with archived = %v, want %v", got, want)
	}
	update(t, s, func(tx shoal.Tx) error { return tx.SetComponentArchived("WS", "Train", "", true) })
	_, err = latest("ws", "train")
	wantCode(t, "LatestComponent with every version archived", err, shoal.ENOTFOUND)
	if got, err := latest("other", "train"); err != nil || got.Version != "7" {
		t.Errorf("another workspace's component of the same name = %s, %v; want version 7, untouched", js(got), err)
	}
	update(t, s, func(tx shoal.Tx) error { return tx.SetComponentArchived("ws", "train", "1", false) })
	if got, err := latest("ws", "train"); err != nil || got.Version != "1" || got.Archived {
		t.Errorf("LatestComponent after restoring 1 = %s, %v; want version 1", js(got), err)
	}
	err = s.Update(t.Context(), func(tx shoal.Tx) error { return tx.SetComponentArchived("ws", "train", "2", true) })
	wantCode(t, "SetComponentArchived of a missing version", err, shoal.ENOTFOUND)
	err = s.Update(t.Context(), func(tx shoal.Tx) error { return tx.SetComponentArchived("ws", "nope", "", true) })
	wantCode(t, "SetComponentArchived of a missing name", err, shoal.ENOTFOUND)
}
