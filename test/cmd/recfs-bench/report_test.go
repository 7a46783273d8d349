package main

import (
	"bytes"
	"fmt"
	"math"
	"os/exec"
	"strings"
	"testing"
)

func TestRatioDirection(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name        string
		row         Row
		want        float64 // NaN: not measured
		behind      bool
		ratioPrefix string
	}{
		{"faster throughput", Row{Unit: UnitMBps, Recfs: 300, PeerVal: 100}, 3, false, "3.00× faster"},
		{"slower throughput", Row{Unit: UnitMBps, Recfs: 100, PeerVal: 400}, 0.25, true, "**4.00× behind**"},
		{"less time", Row{Unit: UnitSeconds, Recfs: 1, PeerVal: 2}, 2, false, "2.00× faster"},
		{"more time", Row{Unit: UnitSeconds, Recfs: 20, PeerVal: 1}, 0.05, true, "**20.0× behind**"},
		{"less memory", Row{Unit: UnitMiB, Recfs: 10, PeerVal: 1000}, 100, false, "100× smaller"},
		{"more bytes per record", Row{Unit: UnitBPR, Recfs: 16, PeerVal: 12}, 0.75, true, "**1.33× behind**"},
		{"records per second", Row{Unit: UnitRecPS, Recfs: 2e6, PeerVal: 1e6}, 2, false, "2.00× faster"},
		{"level within tolerance", Row{Unit: UnitSeconds, Recfs: 1.04, PeerVal: 1}, 1 / 1.04, false, "**1.04× behind**"},
		{"level", Row{Unit: UnitMBps, Recfs: 1000, PeerVal: 1003}, 1000.0 / 1003, false, "level (1.00×)"},
		{"skipped", Row{Unit: UnitSeconds, Recfs: nan, PeerVal: nan, Skip: "tool missing"}, nan, false, "—"},
		{"zero figure", Row{Unit: UnitSeconds, Recfs: 0, PeerVal: 1}, nan, false, "—"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.row.Ratio()
			if math.IsNaN(tc.want) != math.IsNaN(got) || (!math.IsNaN(got) && math.Abs(got-tc.want) > 1e-9) {
				t.Errorf("Ratio() = %v, want %v", got, tc.want)
			}
			if b := tc.row.Behind(0.05); b != tc.behind {
				t.Errorf("Behind(0.05) = %v, want %v", b, tc.behind)
			}
			if s := formatRatio(tc.row); s != tc.ratioPrefix {
				t.Errorf("formatRatio = %q, want %q", s, tc.ratioPrefix)
			}
		})
	}
}

func TestFormatFigure(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{math.NaN(), "—"},
		{0, "0"},
		{0.0123456, "0.0123"},
		{1.23456, "1.23"},
		{12.3456, "12.3"},
		{123.456, "123"},
		{1234.5, "1,234"}, // %.0f rounds half to even
		{1234567, "1,234,567"},
		{-9876543, "-9,876,543"},
	}
	for _, tc := range tests {
		if got := formatFigure(tc.in); got != tc.want {
			t.Errorf("formatFigure(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSummarizeOrder(t *testing.T) {
	rows := []Row{
		{ID: "ahead", Unit: UnitSeconds, Recfs: 1, PeerVal: 3, Peer: "p"},
		{ID: "limit-behind", Unit: UnitSeconds, Recfs: 10, PeerVal: 1, Peer: "cat", Limit: true},
		{ID: "peer-behind-little", Unit: UnitSeconds, Recfs: 2, PeerVal: 1, Peer: "p"},
		{ID: "skipped", Unit: UnitSeconds, Recfs: math.NaN(), PeerVal: math.NaN(), Skip: "no tool"},
		{ID: "peer-behind-much", Unit: UnitMBps, Recfs: 1, PeerVal: 8, Peer: "p"},
	}
	text := strings.Join(summarize(rows), "\n")
	// Peers recfs trails come first, worst first; then machine limits;
	// then the rest; then what was not measured.
	order := []string{"`peer-behind-much`", "`peer-behind-little`", "`limit-behind`", "`ahead`", "`skipped`"}
	last := -1
	for _, id := range order {
		i := strings.Index(text, id)
		if i < 0 {
			t.Fatalf("%s missing from summary:\n%s", id, text)
		}
		if i < last {
			t.Errorf("%s out of order in summary:\n%s", id, text)
		}
		last = i
	}
	if !strings.Contains(text, "no tool") {
		t.Errorf("skip reason missing:\n%s", text)
	}
}

func TestWriteTable(t *testing.T) {
	rows := []Row{
		{ID: "a", Label: "pipe | in label", Unit: UnitSeconds, Recfs: 2, Peer: "tmpfs", PeerVal: 1, Limit: true, Cmd: "grep -r x | cat"},
		{ID: "b", Label: "skipped", Unit: UnitMBps, Recfs: math.NaN(), PeerVal: math.NaN(), Peer: "fuse-zip", Skip: "fuse-zip not installed"},
	}
	var buf bytes.Buffer
	writeTable(&buf, rows)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2+len(rows) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), 2+len(rows), buf.String())
	}
	// Every line has the same number of unescaped cell separators.
	cells := func(l string) int { return strings.Count(l, "|") - strings.Count(l, `\|`) }
	for _, l := range lines[1:] {
		if cells(l) != cells(lines[0]) {
			t.Errorf("line %q has %d separators, header %d", l, cells(l), cells(lines[0]))
		}
	}
	if !strings.Contains(lines[2], "(machine limit)") || !strings.Contains(lines[2], "**2.00× behind**") {
		t.Errorf("row a: %q", lines[2])
	}
	if !strings.Contains(lines[3], "not measured: fuse-zip not installed") || !strings.Contains(lines[3], "| — |") {
		t.Errorf("row b: %q", lines[3])
	}
}

func TestShellQuoteRoundTrip(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	for _, s := range []string{"plain", "/tmp/a b", "it's", `a"b$c\d`, "", "x;rm -rf /", "tab\there", "ünïcode"} {
		out, err := exec.Command("sh", "-c", "printf %s "+shellQuote(s)).Output()
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if string(out) != s {
			t.Errorf("shellQuote(%q) read back as %q", s, out)
		}
	}
}

func TestSummarizeSecs(t *testing.T) {
	tests := []struct {
		in   []float64
		want timing
	}{
		{nil, timing{}},
		{[]float64{3}, timing{3, 3, 3, 1}},
		{[]float64{5, 1, 3}, timing{3, 1, 5, 3}},
		{[]float64{4, 1, 2, 3}, timing{2.5, 1, 4, 4}},
	}
	for _, tc := range tests {
		if got := summarizeSecs(tc.in); got != tc.want {
			t.Errorf("summarizeSecs(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestRecordName(t *testing.T) {
	tests := []struct {
		i, total int
		want     string
	}{
		{0, 10, "000000"},
		{42, 100_000, "000042"},
		{999_999, 1_000_000, "999999"},
		{7, 1_000_001, "0000007"},
		{7, 10_000_001, "00000007"},
	}
	for _, tc := range tests {
		if got := recordName(tc.i, tc.total); got != tc.want {
			t.Errorf("recordName(%d, %d) = %q, want %q", tc.i, tc.total, got, tc.want)
		}
	}
}

func TestFillRecordDeterministic(t *testing.T) {
	for _, size := range []int{1, 6, 100, 1024, 3 << 20} {
		for _, i := range []int{0, 1, 99, 100, 12345} {
			a, b := make([]byte, size), make([]byte, size)
			fillRecord(a, i)
			fillRecord(b, i)
			if !bytes.Equal(a, b) {
				t.Fatalf("record %d of %d bytes differs between calls", i, size)
			}
			hasNeedle := bytes.HasPrefix(a, []byte(needle))
			if want := i%100 == 0 && size >= len(needle); hasNeedle != want {
				t.Errorf("record %d (%d bytes): starts with needle = %v, want %v", i, size, hasNeedle, want)
			}
			if i%100 != 0 && bytes.Contains(a, []byte(needle)) {
				t.Errorf("record %d holds the needle", i)
			}
		}
	}
}

func TestWants(t *testing.T) {
	tests := []struct {
		only, id string
		want     bool
	}{
		{"", "scan-1k-pebble", true},
		{"scan", "scan-1k-pebble", true},
		{"scan-1k", "scan-64k-pebble", false},
		{"mount-grep", "mount-grep-cold-gofuse-tmpfs", true},
		{"mount-grep", "mount-ls-gofuse-tmpfs", false},
		{"open-warm, append", "append-cli", true},
		{"OPEN-WARM", "open-warm", true},
		{"open-warm", "open-cold", false},
	}
	for _, tc := range tests {
		c := config{only: tc.only}
		if got := c.wants(tc.id); got != tc.want {
			t.Errorf("only=%q wants(%q) = %v, want %v", tc.only, tc.id, got, tc.want)
		}
	}
}

func TestRatioTick(t *testing.T) {
	for e, want := range map[int]string{0: "×1", 3: "×8", -1: "×1/2", -4: "×1/16"} {
		if got := ratioTick(e); got != want {
			t.Errorf("ratioTick(%d) = %q, want %q", e, got, want)
		}
	}
}

func TestDrawChart(t *testing.T) {
	path := t.TempDir() + "/c.png"
	rows := []Row{
		{ID: "a", Unit: UnitSeconds, Recfs: 1, PeerVal: 4},
		{ID: "b", Unit: UnitMBps, Recfs: 1, PeerVal: 4},
		{ID: "c", Skip: "no", Recfs: math.NaN(), PeerVal: math.NaN()},
	}
	if err := drawChart(rows, path); err != nil {
		t.Fatal(err)
	}
	if n := fileSize(path); n < 1000 {
		t.Errorf("chart is %d bytes", n)
	}
	if err := drawChart(nil, path); err != nil {
		t.Errorf("empty chart: %v", err)
	}
}

// FuzzGroupThousands checks that grouping only inserts commas, one every
// three digits from the right.
func FuzzGroupThousands(f *testing.F) {
	for _, s := range []string{"0", "999", "1000", "-1234567", "12345678901234567890"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i, c := range s {
			if !(c >= '0' && c <= '9') && !(i == 0 && c == '-') {
				return // only integer strings are grouped
			}
		}
		g := groupThousands(s)
		if strings.ReplaceAll(g, ",", "") != s {
			t.Fatalf("groupThousands(%q) = %q: digits changed", s, g)
		}
		digits := strings.TrimPrefix(g, "-")
		parts := strings.Split(digits, ",")
		for i, p := range parts {
			if (i > 0 && len(p) != 3) || (i == 0 && len(parts) > 1 && (len(p) == 0 || len(p) > 3)) {
				t.Fatalf("groupThousands(%q) = %q: bad group %q", s, g, p)
			}
		}
	})
}

// FuzzFormatFigure checks that a formatted figure reads back within the
// precision it promises.
func FuzzFormatFigure(f *testing.F) {
	for _, v := range []float64{0, 0.001, 1, 9.999, 10, 99.95, 1234.5, 1e12} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || v > 1e15 {
			return
		}
		s := formatFigure(v)
		var back float64
		if _, err := fmt.Sscan(strings.ReplaceAll(s, ",", ""), &back); err != nil {
			t.Fatalf("formatFigure(%v) = %q: %v", v, s, err)
		}
		if math.Abs(back-v) > 0.01*v+0.5 && math.Abs(back-v) > 0.005*v {
			t.Fatalf("formatFigure(%v) = %q reads back as %v", v, s, back)
		}
	})
}

// BenchmarkFillRecord measures how fast the generator makes 1 KiB records.
func BenchmarkFillRecord(b *testing.B) {
	buf := make([]byte, 1024)
	b.SetBytes(int64(len(buf)))
	i := 0
	for b.Loop() {
		fillRecord(buf, i)
		i++
	}
}

// ExampleRow_Ratio shows that a ratio above 1 means recfs is ahead,
// whichever way the unit counts.
func ExampleRow_Ratio() {
	scan := Row{Unit: UnitMBps, Recfs: 3000, PeerVal: 1500}
	ls := Row{Unit: UnitSeconds, Recfs: 2, PeerVal: 1}
	fmt.Println(scan.Ratio(), formatRatio(scan))
	fmt.Println(ls.Ratio(), formatRatio(ls))
	// Output:
	// 2 2.00× faster
	// 0.5 **2.00× behind**
}

func TestScaledDown(t *testing.T) {
	tests := []struct {
		name     string
		c        config
		want     int
		contains string
	}{
		{"defaults: the issue's sizes", config{scale: 1}, 0, ""},
		{"fewer mount records", config{scale: 1, mountOverride: 30_000}, 1, "mount rows 30k records instead of 100k records"},
		{"millions of mount records are not scaled down", config{scale: 1, mountOverride: 2_000_000}, 0, ""},
		{"quick", config{scale: 1, quick: true}, 5, "scan files 64 MiB instead of 1 GiB"},
		{"scaled up (more mount records are not scaled down)", config{scale: 2}, 4, "big record 2 GiB instead of 1 GiB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			c.sizes()
			got := c.scaledDown()
			if len(got) != tc.want {
				t.Fatalf("scaledDown() = %q, want %d entries", got, tc.want)
			}
			if tc.contains != "" && !strings.Contains(strings.Join(got, "; "), tc.contains) {
				t.Errorf("scaledDown() = %q, want it to mention %q", got, tc.contains)
			}
		})
	}
}
