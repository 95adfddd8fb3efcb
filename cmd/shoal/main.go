// Command shoal is Shoal's CLI (`shoal compute ...`, `shoal job ...`): it
// links the client's commands only, so that a process starts at once.
// `shoal server`, `shoal agent`, `shoal sim` and `shoal admin` exec the
// full binary, shoal-server (cmd/shoal-server), found beside this one or
// on the PATH, with the same arguments.
package main

import (
	"context"
	"os"

	"github.com/shoal-ml/shoal/cli"
)

func main() {
	os.Exit(cli.Execute(context.Background()))
}
