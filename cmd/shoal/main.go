// Command shoal is Shoal's single binary: the server (`shoal server`), the
// CLI (`shoal compute ...`) and, later, the node agent.
package main

import (
	"context"
	"os"

	"github.com/shoal-ml/shoal/cli"
)

func main() {
	os.Exit(cli.Execute(context.Background()))
}
