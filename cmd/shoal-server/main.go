// Command shoal-server is Shoal's full binary: the server (`shoal
// server`), the node agent (`shoal agent`), the simulator, the store's
// admin commands and every client command. The `shoal` CLI (cmd/shoal)
// execs it for the commands it does not link; nodes and images run it
// directly (often under the name shoal).
package main

import (
	"context"
	"os"

	"github.com/shoal-ml/shoal/cli/full"
)

func main() {
	os.Exit(full.Execute(context.Background()))
}
