package computes

import (
	"context"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/store"
)

// What an instance is refused at create, by its location and what the
// location's hosts said of their container runtime.
func TestInstanceIsolationAtCreate(t *testing.T) {
	db, _ := teststore.Open(t)
	yes, no := true, false
	withHost := func(usable bool) {
		t.Helper()
		rt := &catalog.ContainerRuntimeInfo{Engine: "podman", Version: "4.3.1"}
		if !usable {
			rt = &catalog.ContainerRuntimeInfo{Error: "podman: not installed"}
		}
		err := db.Update(context.Background(), func(tx store.Tx) error {
			_ = tx.DeleteNode("n1")
			return tx.InsertNode(&node.Node{ID: "n1", Workspace: "ws", Compute: "c", Location: "local", State: node.NodeIdle,
				Runtime: rt, CreatedOn: tx.Now(), LastHeartbeat: tx.Now(), Version: 1})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	check := func(loc *catalog.Location, root *bool) error {
		var err error
		_ = db.View(context.Background(), func(tx store.Tx) error {
			err = checkInstanceIsolation(tx, loc, &compute.ComputeSpec{Name: "ci", EnableRootAccess: root})
			return nil
		})
		return err
	}
	image := &catalog.Location{Name: "local", InstanceImage: "localhost/shoal-instance:1"}
	required := &catalog.Location{Name: "local", InstanceImage: "localhost/shoal-instance:1", Containers: catalog.ContainersRequired}
	noImage := &catalog.Location{Name: "local", Containers: catalog.ContainersRequired}

	if err := check(image, &yes); err != nil {
		t.Errorf("no host has reported yet: %v, want accepted", err)
	}
	if err := check(noImage, &no); core.ErrorField(err) != "location" || !strings.Contains(err.Error(), "instance_image") {
		t.Errorf("required without an instance image: %v", err)
	}
	withHost(false)
	if err := check(required, &no); core.ErrorField(err) != "location" || !strings.Contains(err.Error(), "not installed") {
		t.Errorf("required, no host with a runtime: %v", err)
	}
	if err := check(image, &yes); core.ErrorField(err) != "enable_root_access" {
		t.Errorf("root on hosts without a runtime: %v", err)
	}
	if err := check(image, &no); err != nil {
		t.Errorf("no root on hosts without a runtime: %v, want accepted (host processes)", err)
	}
	var err error
	_ = db.View(context.Background(), func(tx store.Tx) error {
		err = checkInstanceIsolation(tx, image, &compute.ComputeSpec{Name: "ci", Image: "x/ci:1"})
		return nil
	})
	if core.ErrorField(err) != "image" || !strings.Contains(err.Error(), "x/ci:1") {
		t.Errorf("an instance image on hosts without a runtime: %v, want refused naming image", err)
	}
	inSubnet := &compute.ComputeSpec{Name: "ci", Type: compute.ComputeTypeInstance, NetworkSettings: &compute.NetworkSettings{VnetName: "v", Subnet: "s"}}
	_ = db.View(context.Background(), func(tx store.Tx) error {
		err = checkInstanceIsolation(tx, image, inSubnet)
		return nil
	})
	if core.ErrorField(err) != "network_settings.vnet_name" || !strings.Contains(err.Error(), "outside it") {
		t.Errorf("a subnet on hosts without a runtime: %v, want refused naming network_settings.vnet_name", err)
	}
	withHost(true)
	if err := check(required, &yes); err != nil {
		t.Errorf("a host with a runtime: %v", err)
	}
	if got := isolationOf(image, &node.Node{Runtime: &catalog.ContainerRuntimeInfo{Error: "none"}}); got != compute.IsolationHostProcesses {
		t.Errorf("isolation on a node without a runtime: %s", got)
	}
	if got := isolationOf(image, nil); got != compute.IsolationContainer {
		t.Errorf("isolation before a node: %s", got)
	}
	if got := isolationOf(&catalog.Location{Name: "local"}, nil); got != compute.IsolationHostProcesses {
		t.Errorf("isolation without an instance image: %s", got)
	}
}

// An instance joins a subnet only as a container of a location whose
// nodes share one host; elsewhere it is refused, naming the field.
func TestInstanceSubnetAtCreate(t *testing.T) {
	spec := &compute.ComputeSpec{Name: "ci", Type: compute.ComputeTypeInstance, NetworkSettings: &compute.NetworkSettings{VnetName: "v", Subnet: "s"}}
	for _, c := range []struct {
		loc  *catalog.Location
		want string // "" accepted, else a word of the error
	}{
		{&catalog.Location{Name: "local", Provider: "local", InstanceImage: "localhost/i:1"}, ""},
		{&catalog.Location{Name: "local", Provider: "local"}, "processes on the host"},
		{&catalog.Location{Name: "local", Provider: "local", InstanceImage: "localhost/i:1", Containers: catalog.ContainersOff}, "containers: off"},
		{&catalog.Location{Name: "pool", Provider: "sshpool", InstanceImage: "localhost/i:1"}, "several hosts"},
	} {
		err := checkNetwork(c.loc, spec)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v, want accepted", c.loc, err)
		case c.want != "" && (core.ErrorField(err) != "network_settings.vnet_name" || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: %v, want refused naming network_settings.vnet_name (%q)", c.loc, err, c.want)
		}
	}
}
