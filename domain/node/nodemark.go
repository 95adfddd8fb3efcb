package node

// NodeMarker is an optional Provider capability of providers whose nodes
// run on the server's own host (local): NodeMark returns the environment
// variables (KEY=value) that every process the node's agent starts
// carries. The server's application proxy dials an instance's application
// on this host's loopback address and first checks that the listening
// socket is held by a process carrying this mark, so that an instance's
// application can only be one of the instance's own processes. Without
// it, instances' applications are not proxied.
type NodeMarker interface {
	NodeMark(node *Node) []string
}
