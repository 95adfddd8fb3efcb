package rank

import (
	"errors"

	"github.com/shoal-ml/shoal"
)

func asShoalError(err error, target **shoal.Error) bool { return errors.As(err, target) }
