package shoal

import (
	"context"
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
		ok := isLowerRune(r) || isUpperRune(r) || isDigitRune(r) || (i > 0 && (r == '-' || r == '_'))
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

// WorkspaceForWrite returns the workspace, creating it when it does not
// exist yet. Azure users name their workspace on every command
// (`--workspace-name`), so the first write to a new name creates it rather
// than failing; reads of an unknown workspace still get ENOTFOUND.
func WorkspaceForWrite(tx Tx, name, defaultLocation string) (*Workspace, bool, error) {
	ws, err := tx.GetWorkspace(name)
	if err == nil {
		return ws, false, nil
	}
	if ErrorCode(err) != ENOTFOUND {
		return nil, false, err
	}
	if err := ValidateWorkspaceName(name); err != nil {
		return nil, false, err
	}
	ws = &Workspace{Name: name, Location: defaultLocation, CreatedOn: tx.Now()}
	if err := tx.InsertWorkspace(ws); err != nil {
		return nil, false, err
	}
	return ws, true, nil
}
