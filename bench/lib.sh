# Shared by the bench scripts (sourced, from the repository's root): a
# temporary folder $bin removed on exit with the baseline's worktree, and
# bench_args, which turns `--baseline REV` into a binary built from REV.

bin=$(mktemp -d)
cleanup() {
	[ -n "${base_tree:-}" ] && git worktree remove --force "$base_tree" 2>/dev/null
	rm -rf "$bin"
}
trap cleanup EXIT

# full_pkg prints the package of the full binary in the current folder's
# tree: ./cmd/shoal-server since issue 40, ./cmd/shoal before.
full_pkg() { if [ -d cmd/shoal-server ]; then echo ./cmd/shoal-server; else echo ./cmd/shoal; fi; }

# bench_args BUILD ARGS...: sets the array args to ARGS with each
# `--baseline REV` replaced by what BUILD prints (BUILD is called with
# REV's source tree, checked out in a worktree under $bin, and prints the
# flags that name what it built there).
bench_args() {
	local build=$1 out
	shift
	args=()
	while [ $# -gt 0 ]; do
		case "$1" in
		--baseline)
			base_tree="$bin/baseline-src"
			git worktree add --detach --quiet "$base_tree" "$2"
			out=$("$build" "$base_tree") || exit 1
			# shellcheck disable=SC2206 # BUILD prints flags and paths without spaces
			args+=($out)
			shift 2
			;;
		*)
			args+=("$1")
			shift
			;;
		esac
	done
}
