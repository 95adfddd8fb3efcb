package cmdutil

import (
	"fmt"

	"github.com/shoal-ml/shoal/domain/core"
)

// NameArg takes a resource's name as the argument or --name, as az ml
// does; noun is the command's ("datastore") for the message when neither
// is given.
func NameArg(args []string, flag, noun string) (string, error) {
	switch {
	case len(args) == 1 && flag != "" && args[0] != flag:
		return "", &core.Error{Code: core.EINVALID, Field: "name", Message: fmt.Sprintf("name: %q and --name %q differ: give one", args[0], flag)}
	case len(args) == 1:
		return args[0], nil
	case flag != "":
		return flag, nil
	}
	return "", &core.Error{Code: core.EINVALID, Field: "name", Message: fmt.Sprintf("name: is required: shoal %s <verb> NAME (or --name NAME)", noun)}
}
