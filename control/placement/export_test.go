package placement

import (
	"github.com/shoal-ml/shoal/decide/scheduler"
	"github.com/shoal-ml/shoal/service/scheduling"
)

// SetPage sets how many queued jobs a whole-queue pass holds at a time.
func (l *Loop) SetPage(n int) { l.page = n }

// Result is what the pass decided.
func (p *Pass) Result() scheduler.Result { return p.res }

// State is the state the pass read.
func (p *Pass) State() *scheduling.State { return p.st }
