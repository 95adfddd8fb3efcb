package core

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// DefaultWorkspace is created on the first start of a server.
const DefaultWorkspace = "default"

// Workspace groups computes, jobs and role assignments, as an Azure ML
// workspace does. Its Location is where computes go when they name none.
type Workspace struct {
	Name        string    `json:"name"`
	Location    string    `json:"location"`
	Description string    `json:"description,omitempty"`
	CreatedOn   time.Time `json:"created_on"`
	// ResourceGroup is kept for Azure compatibility (`--resource-group`); it
	// has no meaning in Shoal.
	ResourceGroup string `json:"resource_group,omitempty"`
}

// ValidateWorkspaceName checks a workspace name: 3 to 33 characters,
// letters, digits, '-' and '_', starting with a letter or digit.
func ValidateWorkspaceName(name string) error {
	if len(name) < 3 || len(name) > 33 {
		return FieldErrorf("workspace", "%q must be between 3 and 33 characters long", name)
	}
	for i, r := range name {
		ok := IsLowerRune(r) || IsUpperRune(r) || IsDigitRune(r) || (i > 0 && (r == '-' || r == '_'))
		if !ok {
			return FieldErrorf("workspace", "%q may contain only letters, digits, '-' and '_', and must start with a letter or digit", name)
		}
	}
	return nil
}

// WorkspaceService manages workspaces.
type WorkspaceService interface {
	// CreateWorkspace creates a workspace. Returns EINVALID, ECONFLICT.
	CreateWorkspace(ctx context.Context, ws *Workspace) (*Workspace, error)
	// FindWorkspace returns one workspace. Returns ENOTFOUND.
	FindWorkspace(ctx context.Context, name string) (*Workspace, error)
	// ListWorkspaces returns every workspace ordered by name.
	ListWorkspaces(ctx context.Context) ([]*Workspace, error)
}

// WorkspaceNotFound is the refusal for a workspace that does not exist.
func WorkspaceNotFound(name string) error {
	return Errorf(ENOTFOUND, "workspace %q not found", strings.TrimSpace(name))
}

// WorkspaceReader is what finding a write's workspace reads; the store's
// transaction is one. It is declared here so that the domain's kinds need
// not import the Store interface, which names them all.
type WorkspaceReader interface {
	GetWorkspace(name string) (*Workspace, error)
	ListWorkspaces() ([]*Workspace, error)
}

// WorkspaceForWrite returns the workspace a write goes to, or ENOTFOUND
// with the command that creates it. Writes used to create an unknown
// workspace (Azure users name theirs on every command), and a typo in -w
// made a new workspace silently; now only `workspace create` makes one.
func WorkspaceForWrite(tx WorkspaceReader, name string) (*Workspace, error) {
	ws, err := tx.GetWorkspace(name)
	if err == nil || ErrorCode(err) != ENOTFOUND {
		return ws, err
	}
	return nil, UnknownWorkspaceForWrite(tx, name)
}

// UnknownWorkspaceForWrite is the refusal of a write to a workspace that
// does not exist: the closest existing name, and how to create it.
func UnknownWorkspaceForWrite(tx WorkspaceReader, name string) error {
	name = strings.TrimSpace(name)
	hint := ""
	if all, err := tx.ListWorkspaces(); err == nil {
		names := make([]string, 0, len(all))
		for _, w := range all {
			names = append(names, w.Name)
		}
		hint = DidYouMean(name, names)
	}
	return &Error{Code: ENOTFOUND, Field: "workspace", Message: fmt.Sprintf(
		"workspace %q not found%s; writes do not create workspaces: create it first with `shoal workspace create -n %s`", name, hint, name)}
}
