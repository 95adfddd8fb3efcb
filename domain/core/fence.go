package core

import "context"

// Fence is a leader's term: the controllers of the server holding the
// named lease with this token. A store that shares a database between
// servers checks the fence in the same transaction as each write made
// under it, so a server that lost its lease (paused, cut off from the
// database) cannot apply a decision taken in an old term.
type Fence struct {
	Name   string
	Holder string
	Token  int64
}

type fenceKey struct{}

// WithFence returns ctx whose store writes are fenced by f.
func WithFence(ctx context.Context, f Fence) context.Context {
	return context.WithValue(ctx, fenceKey{}, f)
}

// FenceFrom returns the fence of ctx, if any.
func FenceFrom(ctx context.Context) (Fence, bool) {
	f, ok := ctx.Value(fenceKey{}).(Fence)
	return f, ok
}
