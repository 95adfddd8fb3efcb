package azuresdk

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/machinelearning/armmachinelearning/v4"
)

// The Go SDK's EnvironmentVersionsClient and EnvironmentContainersClient
// against Shoal: versions created, read and listed (pages, $orderBy,
// listViewType), one archived as the SDK's users archive (Get, set
// IsArchived, CreateOrUpdate), the whole environment archived through its
// container; a changed version is a 409 and a delete is refused.
func TestGoSDKEnvironments(t *testing.T) {
	url, token, ca := shoalServer(t)
	cred, opts := tokenCredential(token), options(url, ca)
	ctx := context.Background()
	vc, err := armmachinelearning.NewEnvironmentVersionsClient(sub, cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := armmachinelearning.NewEnvironmentContainersClient(sub, cred, opts)
	if err != nil {
		t.Fatal(err)
	}

	// A new name: the container is not found, and the SDK's users then
	// start at version 1, as azure-ai-ml does.
	var re *azcore.ResponseError
	if _, err := cc.Get(ctx, rg, ws, "sdk-env", nil); !errors.As(err, &re) || re.StatusCode != 404 || re.ErrorCode != "ResourceNotFound" {
		t.Fatalf("Get of a new container: %v", err)
	}
	for _, v := range []struct{ version, image string }{{"1", "python:3.11"}, {"2", "python:3.12"}} {
		created, err := vc.CreateOrUpdate(ctx, rg, ws, "sdk-env", v.version, armmachinelearning.EnvironmentVersion{
			Properties: &armmachinelearning.EnvironmentVersionProperties{
				Image: to.Ptr(v.image), CondaFile: to.Ptr("dependencies:\n  - numpy\n"), Description: to.Ptr("made by Azure's Go SDK"),
				OSType: to.Ptr(armmachinelearning.OperatingSystemTypeLinux), Tags: map[string]*string{"team": to.Ptr("vision")},
			},
		}, nil)
		if err != nil {
			t.Fatalf("CreateOrUpdate %s: %v", v.version, err)
		}
		p := created.Properties
		if *created.Name != v.version || *p.Image != v.image || *p.IsArchived || *p.EnvironmentType != armmachinelearning.EnvironmentTypeUserCreated ||
			*p.OSType != armmachinelearning.OperatingSystemTypeLinux || *p.Tags["team"] != "vision" || *p.ProvisioningState != armmachinelearning.AssetProvisioningStateSucceeded ||
			!strings.HasSuffix(*created.ID, "/workspaces/"+ws+"/environments/sdk-env/versions/"+v.version) || created.SystemData.CreatedAt == nil {
			t.Errorf("created %s: %+v %+v", v.version, created.EnvironmentVersion, p)
		}
	}
	got, err := vc.Get(ctx, rg, ws, "sdk-env", "1", nil)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if p := got.Properties; *p.Image != "python:3.11" || *p.CondaFile != "dependencies:\n  - numpy\n" || *p.Description != "made by Azure's Go SDK" {
		t.Errorf("Get: %+v", p)
	}
	c, err := cc.Get(ctx, rg, ws, "sdk-env", nil)
	if err != nil {
		t.Fatalf("container Get: %v", err)
	}
	if p := c.Properties; *c.Name != "sdk-env" || *p.LatestVersion != "2" || *p.NextVersion != "3" || *p.IsArchived {
		t.Errorf("container: %+v", p)
	}

	// A version never changes: another image under version 1 is a 409.
	_, err = vc.CreateOrUpdate(ctx, rg, ws, "sdk-env", "1", armmachinelearning.EnvironmentVersion{
		Properties: &armmachinelearning.EnvironmentVersionProperties{Image: to.Ptr("python:3.13")}}, nil)
	if !errors.As(err, &re) || re.StatusCode != 409 || re.ErrorCode != "Conflict" {
		t.Errorf("changing version 1: %v", err)
	}
	// A build context must be one uploaded to Shoal, not a storage URL.
	_, err = vc.CreateOrUpdate(ctx, rg, ws, "sdk-env", "3", armmachinelearning.EnvironmentVersion{
		Properties: &armmachinelearning.EnvironmentVersionProperties{Build: &armmachinelearning.BuildContext{
			ContextURI: to.Ptr("https://acct.blob.core.windows.net/azureml/DockerBuildContext/x/")}}}, nil)
	if !errors.As(err, &re) || re.StatusCode != 400 || !strings.Contains(err.Error(), "properties.build.contextUri") {
		t.Errorf("a storage URL as the build context: %v", err)
	}

	versions := func(opts *armmachinelearning.EnvironmentVersionsClientListOptions) string {
		t.Helper()
		var out []string
		for pager := vc.NewListPager(rg, ws, "sdk-env", opts); pager.More(); {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			for _, v := range page.Value {
				out = append(out, *v.Name)
			}
		}
		return fmt.Sprint(out)
	}
	if got := versions(nil); got != "[2 1]" {
		t.Errorf("List: %s", got)
	}
	if got := versions(&armmachinelearning.EnvironmentVersionsClientListOptions{OrderBy: to.Ptr("CreatedAtAsc")}); got != "[1 2]" {
		t.Errorf("List oldest first: %s", got)
	}
	if got := versions(&armmachinelearning.EnvironmentVersionsClientListOptions{Top: to.Ptr[int32](1)}); got != "[2]" {
		t.Errorf("List $top=1: %s", got)
	}

	// Archive version 2 as the SDK's users do: read it, mark it, put it.
	v2, err := vc.Get(ctx, rg, ws, "sdk-env", "2", nil)
	if err != nil {
		t.Fatal(err)
	}
	v2.Properties.IsArchived = to.Ptr(true)
	archived, err := vc.CreateOrUpdate(ctx, rg, ws, "sdk-env", "2", v2.EnvironmentVersion, nil)
	if err != nil || !*archived.Properties.IsArchived {
		t.Fatalf("archive version 2: %v %+v", err, archived)
	}
	if got := versions(nil); got != "[1]" {
		t.Errorf("List after the archive: %s", got)
	}
	if got := versions(&armmachinelearning.EnvironmentVersionsClientListOptions{ListViewType: to.Ptr(armmachinelearning.ListViewTypeArchivedOnly)}); got != "[2]" {
		t.Errorf("List archived: %s", got)
	}
	if c, err := cc.Get(ctx, rg, ws, "sdk-env", nil); err != nil || *c.Properties.LatestVersion != "1" {
		t.Errorf("latest after the archive: %v %+v", err, c)
	}

	// Archive the whole environment through its container.
	c.Properties.IsArchived = to.Ptr(true)
	if out, err := cc.CreateOrUpdate(ctx, rg, ws, "sdk-env", c.EnvironmentContainer, nil); err != nil || !*out.Properties.IsArchived {
		t.Fatalf("archive the container: %v", err)
	}
	containers := func(view armmachinelearning.ListViewType) string {
		t.Helper()
		var out []string
		for pager := cc.NewListPager(rg, ws, &armmachinelearning.EnvironmentContainersClientListOptions{ListViewType: to.Ptr(view)}); pager.More(); {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatalf("containers List: %v", err)
			}
			for _, c := range page.Value {
				out = append(out, *c.Name+fmt.Sprint(*c.Properties.IsArchived))
			}
		}
		return fmt.Sprint(out)
	}
	if active, all := containers(armmachinelearning.ListViewTypeActiveOnly), containers(armmachinelearning.ListViewTypeAll); active != "[]" || all != "[sdk-envtrue]" {
		t.Errorf("containers: active %s, all %s", active, all)
	}

	// Azure ML archives environments instead of deleting them.
	if _, err := vc.Delete(ctx, rg, ws, "sdk-env", "1", nil); !errors.As(err, &re) || re.StatusCode != 400 || !strings.Contains(err.Error(), "archive") {
		t.Errorf("Delete a version: %v", err)
	}
	if _, err := cc.Delete(ctx, rg, ws, "sdk-env", nil); !errors.As(err, &re) || re.StatusCode != 400 {
		t.Errorf("Delete the container: %v", err)
	}
	if _, err := vc.Get(ctx, rg, ws, "sdk-env", "1", nil); err != nil {
		t.Errorf("version 1 after the refused delete: %v", err)
	}
}
