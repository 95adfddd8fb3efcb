// Command pgstmts counts the statements a Shoal server ran on PostgreSQL,
// from the server's log written with log_statement=all (bench/jobs with
// SHOAL_TESTPG_OPTS="-c log_statement=all" and SHOAL_TESTPG_LOG=FILE, see
// internal/testpg): how many write transactions (those begun READ
// COMMITTED: the store's Updates, batched) and read-only ones (Views),
// the statements run inside each kind, and, with --jobs, per job. On
// PostgreSQL each statement is a round trip, and those of the write
// transactions run one after another, so the figure per job bounds the
// job path's throughput whatever the machine's load.
//
//	go run ./bench/pgstmts --jobs 310 --top 20 /tmp/pg.log
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
	"regexp"
	"sort"
	"strings"
)

// line matches a logged statement: "TIME TZ [PID] LOG:  statement: SQL"
// or "... LOG:  execute NAME: SQL" (the default log_line_prefix).
var line = regexp.MustCompile(`^\S+ \S+ \S+ \[(\d+)\] LOG:  (?:statement|execute [^:]*): (.*)$`)

// params matches a query's $n placeholders, folded for the tally.
var params = regexp.MustCompile(`\$\d+`)

func main() {
	jobs := flag.Int("jobs", 0, "jobs the run pushed through, to print statements per job")
	top := flag.Int("top", 15, "the write transactions' most frequent statements to list")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: pgstmts [--jobs N] [--top N] POSTGRESQL_LOG")
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	c := count(bufio.NewScanner(f))
	fmt.Printf("write transactions %d, %d statements in them; read-only transactions %d, %d statements in them; %d statements in all\n",
		c.writeTx, c.writeStmts, c.readTx, c.readStmts, c.all)
	if len(c.lengths) > 0 {
		sort.Ints(c.lengths)
		at := func(q float64) int { return c.lengths[int(q*float64(len(c.lengths)-1))] }
		fmt.Printf("statements per write transaction (its server's write path held, in round trips): p50 %d, p99 %d, max %d\n", at(0.5), at(0.99), c.lengths[len(c.lengths)-1])
	}
	if *jobs > 0 {
		n := float64(*jobs)
		fmt.Printf("per job: %.1f statements in write transactions, %.1f in read-only ones, %.1f in all\n",
			float64(c.writeStmts)/n, float64(c.readStmts)/n, float64(c.all)/n)
	}
	type kv struct {
		q string
		n int
	}
	var kinds []kv
	for q, n := range c.byQuery {
		kinds = append(kinds, kv{q, n})
	}
	sort.Slice(kinds, func(i, j int) bool {
		return kinds[i].n > kinds[j].n || kinds[i].n == kinds[j].n && kinds[i].q < kinds[j].q
	})
	for i, k := range kinds {
		if i == *top {
			break
		}
		fmt.Printf("%7d  %s\n", k.n, k.q)
	}
}

// counts are a log's tallies.
type counts struct {
	writeTx, writeStmts, readTx, readStmts, all int
	// byQuery counts the write transactions' statements by text (cut).
	byQuery map[string]int
	// lengths are the statements of each write transaction, begin and
	// commit included: how long each held its server's write path, in
	// round trips.
	lengths []int
}

// count tallies the statements of a log, following each backend's
// transaction by its PID.
func count(sc *bufio.Scanner) counts {
	c := counts{byQuery: map[string]int{}}
	kind := map[string]string{} // PID → "w", "r" or "" (no transaction)
	length := map[string]int{}  // PID → statements of its write transaction so far
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		pid, q := m[1], m[2]
		c.all++
		lq := strings.ToLower(q)
		switch {
		case strings.HasPrefix(lq, "begin isolation level read committed"):
			kind[pid] = "w"
			c.writeTx++
		case strings.HasPrefix(lq, "begin") && strings.Contains(lq, "read only"):
			kind[pid] = "r"
			c.readTx++
		}
		switch kind[pid] {
		case "w":
			c.writeStmts++
			length[pid]++
			q = params.ReplaceAllString(q, "?")
			if len(q) > 100 {
				q = q[:100]
			}
			c.byQuery[q]++
		case "r":
			c.readStmts++
		}
		if lq == "commit" || lq == "rollback" {
			if kind[pid] == "w" {
				c.lengths = append(c.lengths, length[pid])
				length[pid] = 0
			}
			kind[pid] = ""
		}
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
	return c
}
