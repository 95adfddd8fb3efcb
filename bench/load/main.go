// Command load runs N concurrent API clients against a real server (in
// this process, SQLite in a temporary directory, nodes from the local
// provider) for a while — reads, writes with If-Match, job submissions,
// log follows — and reports throughput, p50/p99 latency and errors by
// status per operation, and whether an If-Match counter lost an update.
// Run it with bench/load.sh, which builds the agent binary.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/server/app"
)

type sample struct {
	op     string
	status int
	d      time.Duration
}

func main() {
	agentBin := flag.String("agent", "", "path of the shoal binary started as `shoal agent` (required)")
	clients := flag.Int("clients", 100, "concurrent clients")
	duration := flag.Duration("duration", 60*time.Second, "how long the clients run")
	seed := flag.Uint64("seed", 1, "the clients' random seed")
	flag.Parse()
	if *agentBin == "" {
		log.Fatal("--agent is required")
	}
	dir, err := os.MkdirTemp("", "shoal-load-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "server.yml")
	os.WriteFile(cfg, []byte("kill_grace: 1s\n"), 0o600)
	ctx := context.Background()
	m, err := app.Start(ctx, app.Options{Listen: "127.0.0.1:0", DataDir: filepath.Join(dir, "data"), NodesDir: benchNodesDir(dir), ConfigPath: cfg,
		ClientConfigPath: "-", AgentExecutable: *agentBin})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	base, token := m.URL()+"/api/v1/workspaces/default", m.AdminToken
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *clients}}
	call := func(method, path string, body []byte, hdr map[string]string) (int, http.Header, []byte) {
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, nil, []byte(err.Error())
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, b
	}
	// A cluster of 2 warm local nodes for the jobs, and the counter.
	if st, _, b := call("PUT", "/computes/load-cpu", []byte(`{"size":"Standard_DS3_v2","min_instances":2,"max_instances":2,"idle_time_before_scale_down":600,"tags":{"counter":"0"}}`), nil); st >= 300 {
		log.Fatalf("create the cluster: %d %s", st, b)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, _, b := call("GET", "/computes/load-cpu", nil, nil)
		var c struct {
			NodeStateCounts struct {
				Idle int `json:"idle_node_count"`
			} `json:"node_state_counts"`
		}
		json.Unmarshal(b, &c)
		if c.NodeStateCounts.Idle == 2 {
			break
		}
		if time.Now().After(deadline) {
			log.Fatal("the cluster's 2 nodes were not ready within 60 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// A finished job whose log the followers read.
	_, _, b := call("POST", "/jobs", []byte(`{"command":"echo hello","compute":"load-cpu"}`), nil)
	var first struct {
		Name string `json:"name"`
	}
	json.Unmarshal(b, &first)

	var mu sync.Mutex
	var samples []sample
	increments := 0
	stop := time.Now().Add(*duration)
	var wg sync.WaitGroup
	for w := range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(*seed, uint64(w)))
			var mine []sample
			inc := 0
			for time.Now().Before(stop) {
				start := time.Now()
				var op string
				var st int
				switch p := rng.IntN(100); {
				case p < 45:
					op = "read: compute show"
					st, _, _ = call("GET", "/computes/load-cpu", nil, nil)
				case p < 55:
					op = "read: job list (20)"
					st, _, _ = call("GET", "/jobs?limit=20", nil, nil)
				case p < 75:
					op = "write: counter with If-Match"
					st = increment(call, &inc)
				case p < 95:
					op = "write: job submit"
					st, _, _ = call("POST", "/jobs", []byte(`{"command":"true","compute":"load-cpu"}`), nil)
				default:
					op = "read: log follow"
					st, _, _ = call("GET", "/jobs/"+first.Name+"/logs?follow=true", nil, nil)
				}
				mine = append(mine, sample{op, st, time.Since(start)})
			}
			mu.Lock()
			samples = append(samples, mine...)
			increments += inc
			mu.Unlock()
		}()
	}
	wg.Wait()
	report(samples, *duration, *clients)
	_, _, cb := call("GET", "/computes/load-cpu", nil, nil)
	var c struct {
		Tags map[string]string `json:"tags"`
	}
	json.Unmarshal(cb, &c)
	got, _ := strconv.Atoi(c.Tags["counter"])
	lost := increments - got
	fmt.Printf("\nIf-Match counter: %d successful increments, counter %d: %d lost updates\n", increments, got, lost)
	if lost != 0 {
		os.Exit(1)
	}
}

// increment reads the counter tag and writes it back plus one with
// If-Match, retrying on 412 until it lands; it counts the successes.
func increment(call func(string, string, []byte, map[string]string) (int, http.Header, []byte), inc *int) int {
	for range 50 {
		st, h, b := call("GET", "/computes/load-cpu", nil, nil)
		if st != 200 {
			return st
		}
		var c struct {
			Tags map[string]string `json:"tags"`
		}
		json.Unmarshal(b, &c)
		n, _ := strconv.Atoi(c.Tags["counter"])
		c.Tags["counter"] = strconv.Itoa(n + 1)
		body, _ := json.Marshal(map[string]any{"tags": c.Tags})
		st, _, _ = call("PATCH", "/computes/load-cpu", body, map[string]string{"If-Match": h.Get("ETag")})
		if st == http.StatusPreconditionFailed {
			continue
		}
		if st == 200 {
			*inc++
		}
		return st
	}
	return http.StatusPreconditionFailed
}

func report(samples []sample, d time.Duration, clients int) {
	byOp := map[string][]sample{}
	for _, s := range samples {
		byOp[s.op] = append(byOp[s.op], s)
	}
	ops := make([]string, 0, len(byOp))
	for op := range byOp {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	fmt.Printf("%d clients for %s: %d requests, %.0f/s\n\n", clients, d, len(samples), float64(len(samples))/d.Seconds())
	fmt.Printf("%-30s %8s %8s %9s %9s  %s\n", "operation", "count", "per s", "p50 ms", "p99 ms", "statuses")
	for _, op := range ops {
		l := byOp[op]
		ds := make([]time.Duration, len(l))
		codes := map[int]int{}
		for i, s := range l {
			ds[i] = s.d
			codes[s.status]++
		}
		slices.Sort(ds)
		var cs []string
		for code, n := range codes {
			cs = append(cs, fmt.Sprintf("%d×%d", code, n))
		}
		sort.Strings(cs)
		fmt.Printf("%-30s %8d %8.0f %9.1f %9.1f  %v\n", op, len(l), float64(len(l))/d.Seconds(),
			ms(ds[len(ds)/2]), ms(ds[min(len(ds)-1, len(ds)*99/100)]), cs)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// benchNodesDir is where the bench's nodes keep their work dirs: beside
// the data dir, in the bench's folder, which is opened (0711) so that the
// accounts work runs as (the server running as root) reach their folders.
func benchNodesDir(dir string) string {
	_ = os.Chmod(dir, 0o711)
	return filepath.Join(dir, "nodes")
}
