package main

import (
	"math"
	"strings"
	"testing"

	"github.com/recfs/recfs/test/internal/vgw"
)

func TestCountRequests(t *testing.T) {
	tests := []struct {
		name string
		reqs []vgw.Request
		want string
		gets int
	}{
		{"none", nil, "0 HEAD + 0 GET", 0},
		{"head only", []vgw.Request{{Method: "HEAD", Path: "/recfs/a.log"}}, "1 HEAD + 0 GET", 0},
		{"head and a ranged get", []vgw.Request{{Method: "HEAD"}, {Method: "GET", Range: "bytes=0-1048575", Bytes: 1 << 20}},
			"1 HEAD + 1 GET (1.0 MiB)", 1},
		{"small get", []vgw.Request{{Method: "HEAD"}, {Method: "GET", Bytes: 1500}}, "1 HEAD + 1 GET (1.5 KiB)", 1},
		{"other methods", []vgw.Request{{Method: "PUT"}, {Method: "GET", Bytes: 7}}, "0 HEAD + 1 GET (7 B) + 1 other", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := countRequests(tc.reqs)
			if got := c.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			if len(c.Ranges) != tc.gets || len(c.Paths) != tc.gets {
				t.Errorf("%d ranges, %d paths, want %d of each", len(c.Ranges), len(c.Paths), tc.gets)
			}
		})
	}
}

func TestRunsText(t *testing.T) {
	one := reqCount{Heads: 1}
	two := reqCount{Heads: 1, Gets: 1, Bytes: 2 << 20}
	tests := []struct {
		name string
		cs   []reqCount
		want string
	}{
		{"all alike", []reqCount{one, one, one}, "1 HEAD + 0 GET in each of 3 runs"},
		{"two kinds in order of first sight", []reqCount{two, one, two}, "1 HEAD + 1 GET (2.0 MiB) ×2, 1 HEAD + 0 GET ×1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := runsText(tc.cs); got != tc.want {
				t.Errorf("runsText = %q, want %q", got, tc.want)
			}
		})
	}
	h, g, o := worstCount([]reqCount{one, {Heads: 2, Others: 1}, two})
	if h != 2 || g != 1 || o != 1 {
		t.Errorf("worstCount = %d, %d, %d; want 2, 1, 1", h, g, o)
	}
}

func TestRangesWithin(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name   string
		ranges []string
		lo, hi int64
		want   bool
	}{
		{"the record's block", []string{"bytes=1048576-2097151"}, mib + 10, mib + 200, true},
		{"two blocks for a record across an edge", []string{"bytes=0-2097151"}, mib - 50, mib + 50, true},
		{"last block cut at the object's end", []string{"bytes=2097152-2100000"}, 2*mib + 5, 2*mib + 90, true},
		{"a block the record is not in", []string{"bytes=1048576-2097151", "bytes=3145728-4194303"}, mib + 10, mib + 200, false},
		{"a whole-object GET", []string{""}, 10, 20, false},
		{"more than the record's blocks", []string{"bytes=0-4194303"}, mib + 10, mib + 200, false},
		{"no GET at all", nil, 10, 20, false},
		{"garbage", []string{"bytes=5-"}, 0, 10, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := rangesWithin(tc.ranges, tc.lo, tc.hi, mib); got != tc.want {
				t.Errorf("rangesWithin(%v, %d, %d) = %v, want %v", tc.ranges, tc.lo, tc.hi, got, tc.want)
			}
		})
	}
}

func TestParseRange(t *testing.T) {
	tests := []struct {
		in     string
		lo, hi int64
		ok     bool
	}{
		{"bytes=0-99", 0, 99, true},
		{"bytes=1048576-2097151", 1 << 20, 2<<20 - 1, true},
		{"bytes=-500", 0, 0, false},
		{"bytes=9-3", 0, 0, false},
		{"0-99", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, tc := range tests {
		lo, hi, ok := parseRange(tc.in)
		if lo != tc.lo || hi != tc.hi || ok != tc.ok {
			t.Errorf("parseRange(%q) = %d, %d, %v; want %d, %d, %v", tc.in, lo, hi, ok, tc.lo, tc.hi, tc.ok)
		}
	}
}

func TestS3Counts(t *testing.T) {
	if got, want := intRange([]int64{3, 3, 3}), "3"; got != want {
		t.Errorf("intRange = %q, want %q", got, want)
	}
	if got, want := intRange([]int64{5, 3, 4}), "3–5"; got != want {
		t.Errorf("intRange = %q, want %q", got, want)
	}
	if got, want := intRange(nil), "?"; got != want {
		t.Errorf("intRange(nil) = %q, want %q", got, want)
	}
	if got, want := summarizeInts([]int64{9, 1, 5, 7}), int64(7); got != want {
		t.Errorf("summarizeInts = %d, want %d", got, want)
	}
	got := countsText([]int64{1, 1}, []int64{70, 72}, []int64{1 << 30, 1 << 30}, 1<<30)
	if want := "1 HEAD, 70–72 GETs, 1 GiB fetched (1.00× the object)"; got != want {
		t.Errorf("countsText = %q, want %q", got, want)
	}
	if got, want := humanSize(100), "100 B"; got != want {
		t.Errorf("humanSize = %q, want %q", got, want)
	}
	if got, want := formatDelta(medianDiff([]float64{1.5, 2.0, 1.1}, []float64{1.0, 1.9, 1.2})), "+100 ms"; got != want {
		t.Errorf("formatDelta(medianDiff) = %q, want %q", got, want)
	}
	if got, want := formatDelta(-0.0031), "-3 ms"; got != want {
		t.Errorf("formatDelta = %q, want %q", got, want)
	}
	if d := medianDiff(nil, nil); d != 0 || math.IsNaN(d) {
		t.Errorf("medianDiff of nothing = %v, want 0", d)
	}
}

func TestS3SectionSelected(t *testing.T) {
	for _, only := range []string{"s3", "s3-open", "s3-cat-one", "S3-INDEX"} {
		c := config{only: only}
		if !c.wantsAny(s3IDs) {
			t.Errorf("-only %s selects no S3 row", only)
		}
	}
	c := config{only: "mount"}
	if c.wantsAny(s3IDs) {
		t.Error("-only mount selects an S3 row")
	}
	found := false
	for _, s := range sections {
		if s.name == "S3" {
			found = true
		}
	}
	if !found {
		t.Error("no S3 section in the sections table")
	}
}

func TestChartLeavesOutByteCounts(t *testing.T) {
	rows := []Row{
		{ID: "s3-cat-one", Unit: UnitBytes, Recfs: 1 << 20, PeerVal: 100},
		{ID: "s3-grep-warm", Unit: UnitSeconds, Recfs: 1, PeerVal: 1},
	}
	got := chartRows(rows)
	if len(got) != 1 || got[0].ID != "s3-grep-warm" {
		t.Errorf("chartRows = %v, want only s3-grep-warm", got)
	}
}

func TestRateText(t *testing.T) {
	for _, tc := range []struct {
		bits int64
		want string
	}{{1_000_000_000, "1 Gbit/s"}, {200_000_000, "200 Mbit/s"}, {2_500_000_000, "2500 Mbit/s"}} {
		if got := rateText(tc.bits); got != tc.want {
			t.Errorf("rateText(%d) = %q, want %q", tc.bits, got, tc.want)
		}
	}
}

// TestTBFRowsListed checks that the limited-link rows are rows of the S3
// section (so -only and a missing versitygw treat them like the others)
// and that a row not measured says why.
func TestTBFRowsListed(t *testing.T) {
	in := map[string]bool{}
	for _, id := range s3IDs {
		in[id] = true
	}
	for _, l := range tbfLinks {
		if !in[l.id] {
			t.Errorf("%s is not in s3IDs %v", l.id, s3IDs)
		}
		r := tbfRow(l, 0, 0, "cmd", "not root")
		if r.Skip != "not root" || r.Section != "S3" || !strings.Contains(r.Label, rateText(l.rate)) {
			t.Errorf("tbfRow(%s) = %+v", l.id, r)
		}
	}
}
