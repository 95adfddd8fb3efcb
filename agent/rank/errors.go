package rank

import (
	"errors"

	"github.com/shoal-ml/shoal/domain/core"
)

func asShoalError(err error, target **core.Error) bool { return errors.As(err, target) }
