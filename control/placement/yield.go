package placement

import "context"

// yieldKey carries, in a pass's context, what a pass over the whole queue
// calls between the pages it reads (WithYield).
type yieldKey struct{}

// WithYield returns ctx with yield, which a pass over the whole queue
// planned in ctx calls between its pages: the server's way of letting the
// placement passes waiting for the core go first (a new job's decision
// shared it with a pass over 100,000 queued jobs). yield must not wait
// for anything the caller holds: a pass run under the placement lock
// gets no yield.
func WithYield(ctx context.Context, yield func()) context.Context {
	return context.WithValue(ctx, yieldKey{}, yield)
}

// yieldIn calls ctx's yield, if any.
func yieldIn(ctx context.Context) {
	if y, ok := ctx.Value(yieldKey{}).(func()); ok {
		y()
	}
}
