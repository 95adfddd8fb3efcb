package agent

import (
	"os"
	"testing"

	"github.com/shoal-ml/shoal/internal/testctr"
)

func TestMain(m *testing.M) { os.Exit(testctr.Main(m)) }
