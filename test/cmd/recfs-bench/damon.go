package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// damonPageout describes a running DAMON scheme that pages out idle memory
// (as on the machine these benchmarks were first run on), or returns "".
// Such a scheme evicts page cache that has not been touched for a while —
// a FUSE mount's cached records and listings, the source log — but cannot
// evict tmpfs files (no swap), so warm rows that wait too long between
// passes would compare a cold mount with a warm tmpfs. The mount rows
// therefore run each warm command once right before it is timed, and read
// the source into the page cache before each first pass.
func damonPageout() string {
	const root = "/sys/kernel/mm/damon/admin/kdamonds"
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "contexts", "*", "schemes", "*"))
	for _, d := range dirs {
		kd := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(d))))
		if readTrim(filepath.Join(kd, "state")) != "on" || readTrim(filepath.Join(d, "action")) != "pageout" {
			continue
		}
		ctx := filepath.Dir(filepath.Dir(d))
		age, _ := strconv.ParseFloat(readTrim(filepath.Join(d, "access_pattern", "age", "min")), 64)
		aggr, _ := strconv.ParseFloat(readTrim(filepath.Join(ctx, "monitoring_attrs", "intervals", "aggr_us")), 64)
		return fmt.Sprintf("a DAMON pageout scheme is on (%s): page cache idle for about %.0f s or more is evicted; tmpfs is not", d, age*aggr/1e6)
	}
	return ""
}

// readTrim returns the trimmed contents of a small file, or "".
func readTrim(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}
