package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
)

// steadyState is what one server measured at steady state.
type steadyState struct {
	rss   int64   // bytes
	cores float64 // CPU
	beats float64 // heartbeats per second
	mem   memStats
	// growth: bytes per queued job and per node.
	growth growth
}

// memStats are the Go runtime's figures of the server's memory, read
// from the end of its heap profile (runtime.MemStats): what of the RSS is
// live heap, what the collector let grow, and goroutine stacks.
type memStats struct {
	heapAlloc, heapInuse, stackInuse, sys int64
	goroutines                            int
}

func (m memStats) String() string {
	return fmt.Sprintf("%.0f MB allocated, %.0f MB in use, %.0f MB of stacks, %.0f MB from the OS, %d goroutines",
		mb(m.heapAlloc), mb(m.heapInuse), mb(m.stackInuse), mb(m.sys), m.goroutines)
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// memStats reads the server's runtime figures through --pprof-listen.
func (s *server) memStats() memStats { return s.readMemStats("/debug/pprof/heap?debug=1") }

// readMemStats reads them from the heap profile at heapPath.
func (s *server) readMemStats(heapPath string) memStats {
	var m memStats
	get := func(path string) string {
		resp, err := http.Get("http://" + s.pprofAddr + path)
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	for _, line := range strings.Split(get(heapPath), "\n") {
		name, val, ok := strings.Cut(strings.TrimPrefix(line, "# "), " = ")
		if !ok {
			continue
		}
		// "# Stack = inuse / sys"
		first, _, _ := strings.Cut(strings.TrimSpace(val), " ")
		n, _ := strconv.ParseInt(first, 10, 64)
		switch name {
		case "HeapAlloc":
			m.heapAlloc = n
		case "HeapInuse":
			m.heapInuse = n
		case "Stack":
			m.stackInuse = n
		case "Sys":
			m.sys = n
		}
	}
	// "goroutine profile: total N"
	g := get("/debug/pprof/goroutine?debug=1")
	if _, rest, ok := strings.Cut(g, "total "); ok {
		first, _, _ := strings.Cut(rest, "\n")
		m.goroutines, _ = strconv.Atoi(strings.TrimSpace(first))
	}
	return m
}

// curveRow is one point of the curve: one variant at one size.
type curveRow struct {
	v      variant
	nodes  int
	steady steadyState
}

// variant is one server measured: a binary and its GOGC.
type variant struct {
	bin, gogc, label string
}

// slug names the variant's profile folder.
func (v variant) slug() string {
	if v.gogc == "" {
		return filepath.Base(v.bin)
	}
	return filepath.Base(v.bin) + "-gogc" + v.gogc
}

// variants are the servers the flags ask for: the baseline binary first
// (when given), each with each GOGC.
func variants() []variant {
	bins := []string{*bin}
	if *against != "" {
		bins = []string{*against, *bin}
	}
	gcs := []string{""}
	if *gogcs != "" {
		gcs = nil
		for _, g := range strings.Split(*gogcs, ",") {
			if g = strings.TrimSpace(g); g == "default" {
				g = ""
			} else if _, err := strconv.Atoi(g); err != nil && g != "off" {
				log.Fatalf("--gogc: %q is neither a number, off nor default", g)
			}
			gcs = append(gcs, g)
		}
	}
	var vs []variant
	for _, b := range bins {
		for _, g := range gcs {
			label := filepath.Base(b)
			if g != "" {
				label += " GOGC=" + g
			}
			vs = append(vs, variant{bin: b, gogc: g, label: label})
		}
	}
	return vs
}

// printCurve prints the curve: per binary and size, the RSS and the heap,
// CPU, and bytes per node (RSS over nodes, and the growth from the
// previous size over the nodes added, which leaves out the fixed cost).
func printCurve(rows []curveRow, vs []variant) {
	fmt.Println()
	fmt.Println("(+B/job, +B/node: what the queue, then the nodes, added to the empty server, divided by its jobs and nodes)")
	// +B/job and +B/node (RSS, live heap) are the deltas of one point:
	// empty server → queue → queue and nodes, each divided.
	fmt.Printf("%-20s %7s %9s %9s %9s %8s %6s %8s %11s %11s %10s %11s %11s %12s\n", "binary", "nodes", "RSSmax MB", "heap MB", "stack MB", "gorout.", "cores", "beats/s", "RSS B/node", "Δ B/node",
		"+RSS B/job", "+heap B/job", "+RSS B/node", "+heap B/node")
	for _, v := range vs {
		var prev *curveRow
		for i := range rows {
			r := &rows[i]
			if r.v != v {
				continue
			}
			delta := "-"
			if prev != nil {
				delta = strconv.FormatInt((r.steady.rss-prev.steady.rss)/int64(r.nodes-prev.nodes), 10)
			}
			g := r.steady.growth
			perJob, perJobHeap := "-", "-"
			if g.jobs > 0 {
				perJob, perJobHeap = strconv.FormatInt(g.jobRSS, 10), strconv.FormatInt(g.jobHeap, 10)
			}
			fmt.Printf("%-20s %7d %9.0f %9.0f %9.0f %8d %6.2f %8.0f %11d %11s %10s %11s %11d %12d\n", v.label, r.nodes, mb(r.steady.rss),
				mb(r.steady.mem.heapInuse), mb(r.steady.mem.stackInuse), r.steady.mem.goroutines, r.steady.cores, r.steady.beats,
				r.steady.rss/int64(r.nodes), delta, perJob, perJobHeap, g.nodeRSS, g.nodeHeap)
			prev = r
		}
	}
	// Each variant beside the first, at each size.
	for _, v := range vs[1:] {
		fmt.Println()
		fmt.Printf("%s against %s:\n", v.label, vs[0].label)
		fmt.Printf("%7s %10s %10s %10s\n", "nodes", "RSS", "heap", "CPU")
		for _, r := range rows {
			if r.v != v {
				continue
			}
			for _, b := range rows {
				if b.v == vs[0] && b.nodes == r.nodes {
					fmt.Printf("%7d %9.2f× %9.2f× %9.2f×\n", r.nodes, float64(r.steady.rss)/float64(b.steady.rss),
						float64(r.steady.mem.heapInuse)/float64(b.steady.mem.heapInuse), r.steady.cores/b.steady.cores)
				}
			}
		}
	}
}
