package progress

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// fakeClock is a settable time source.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newFakeClock() *fakeClock               { return &fakeClock{time.Unix(1_700_000_000, 0)} }
func drawn(b *bytes.Buffer) string           { s := b.String(); b.Reset(); return s }
func newTestBar(b *bytes.Buffer, c *fakeClock) *Bar {
	return newClock(b, "indexing x", c.now)
}

// TestProgressBarTiming: nothing before progressDelay; then each tick
// draws the last Update with its rate and time left, a stall included
// (the rate falls, the time left grows); Done erases the line for good.
func TestProgressBarTiming(t *testing.T) {
	var out bytes.Buffer
	c := newFakeClock()
	p := newTestBar(&out, c)
	p.tick()
	const frame = "\rindexing x [%s]%s\x1b[K"
	steps := []struct {
		advance     time.Duration
		update      bool
		done, total int64
		want        string // "" for nothing drawn
	}{
		{0, true, 10, 100, ""}, // too early: quick jobs show nothing
		{progressDelay - time.Millisecond, false, 0, 0, ""},
		{time.Millisecond, false, 0, 0, fmt.Sprintf(frame, "===                           ", "  10% 10 B/100 B 25 B/s 4s left")},
		{1600 * time.Millisecond, false, 0, 0, fmt.Sprintf(frame, "===                           ", "  10% 10 B/100 B 5 B/s 18s left")}, // stalled
		{0, true, 60, 100, fmt.Sprintf(frame, "==================            ", "  60% 60 B/100 B 30 B/s 2s left")},
		{time.Second, true, 150, 100, fmt.Sprintf(frame, strings.Repeat("=", progressWidth), " 100% 100 B/100 B 33 B/s")}, // clamped
		{0, true, -5, 100, fmt.Sprintf(frame, strings.Repeat(" ", progressWidth), "   0% 0 B/100 B")},
	}
	for i, s := range steps {
		c.advance(s.advance)
		if s.update {
			p.Update(s.done, s.total)
		}
		p.tick()
		if got := drawn(&out); got != s.want {
			t.Errorf("step %d: drew %q, want %q", i, got, s.want)
		}
	}
	p.Done()
	if got := drawn(&out); got != "\r\x1b[K" {
		t.Errorf("Done wrote %q, want the line erased", got)
	}
	c.advance(time.Second)
	p.Update(99, 100)
	p.tick()
	p.Done()
	if got := drawn(&out); got != "" {
		t.Errorf("Update and tick after Done drew %q", got)
	}
}

func TestProgressBarQuickJobLeavesNoTrace(t *testing.T) {
	var out bytes.Buffer
	c := newFakeClock()
	p := newTestBar(&out, c)
	p.Update(1, 2)
	p.tick()
	p.Done()
	c.advance(time.Second)
	p.tick()
	if out.Len() != 0 {
		t.Errorf("a job finished before the delay wrote %q", out.String())
	}
	// Nor is anything drawn before the first Update, however late.
	q := newTestBar(&out, c)
	c.advance(time.Minute)
	q.tick()
	if out.Len() != 0 {
		t.Errorf("a bar without an Update drew %q", out.String())
	}
}

func TestRenderProgress(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		label       string
		done, total int64
		elapsed     time.Duration
		cols        int
		want        string
	}{
		{"indexing x", 0, 1000, time.Second, 0, "indexing x [                              ]   0% 0 B/1000 B"},
		{"indexing x", 500, 1000, time.Second, 0, "indexing x [===============               ]  50% 500 B/1000 B 500 B/s 1s left"},
		{"indexing x", 1000, 1000, time.Second, 0, "indexing x [==============================] 100% 1000 B/1000 B 1000 B/s"},
		{"indexing x", 2000, 1000, time.Second, 0, "indexing x [==============================] 100% 1000 B/1000 B 1000 B/s"},
		{"indexing x", 64 * mib, 128 * mib, 4 * time.Second, 0, "indexing x [===============               ]  50% 64.0 MiB/128.0 MiB 16.0 MiB/s 4s left"},
		{"indexing x", 1 * mib, 301 * mib, 2 * time.Second, 0, "indexing x [                              ]   0% 1.0 MiB/301.0 MiB 512.0 KiB/s 10m00s left"},
		{"indexing x", 1 << 10, 1 << 40, time.Second, 0, "indexing x [                              ]   0% 1.0 KiB/1.0 TiB 1.0 KiB/s >99h left"},
		{"indexing x", 2048, 0, 2 * time.Second, 0, "indexing x 2.0 KiB 1.0 KiB/s 2.0s"},
		{"indexing x", 0, -1, 0, 0, "indexing x 0 B 0.0s"},
		// A terminal's width: the label keeps what it can, then the bar
		// shrinks to fit, down to progressMinWidth cells.
		{"indexing /data/logs/000123.log", 64 * mib, 128 * mib, 4 * time.Second, 120,
			"indexing /data/logs/000123.log [===============               ]  50% 64.0 MiB/128.0 MiB 16.0 MiB/s 4s left"},
		{"indexing /data/logs/000123.log", 64 * mib, 128 * mib, 4 * time.Second, 80,
			"indexing …logs/000123.log [====    ]  50% 64.0 MiB/128.0 MiB 16.0 MiB/s 4s left"},
		{"indexing /data/logs/000123.log", 64 * mib, 128 * mib, 4 * time.Second, 90,
			"indexing /data/logs/000123.log [======       ]  50% 64.0 MiB/128.0 MiB 16.0 MiB/s 4s left"},
		{"indexing " + strings.Repeat("d/", 50) + "x.log", 2048, 0, 2 * time.Second, 40, "indexing …/x.log 2.0 KiB 1.0 KiB/s 2.0s"},
	} {
		got := render(c.label, c.done, c.total, c.elapsed, c.cols)
		if got != c.want {
			t.Errorf("render(%q, %d, %d, %v, %d) =\n%q, want\n%q", c.label, c.done, c.total, c.elapsed, c.cols, got, c.want)
		}
		if c.cols > 0 && utf8.RuneCountInString(got) >= c.cols {
			t.Errorf("%q takes %d cells of a %d-cell terminal", got, utf8.RuneCountInString(got), c.cols)
		}
	}
}

// TestRenderProgressFits: on any terminal of 80 cells or more, a line
// never reaches the last cell (where it would wrap), whatever the label.
func TestRenderProgressFits(t *testing.T) {
	label := "indexing " + strings.Repeat("/very/long/dir", 10) + "/000123.log"
	for cols := 80; cols <= 200; cols++ {
		for _, total := range []int64{0, 1023 << 30} {
			got := render(label, 1000<<20, total, time.Second, cols)
			if n := utf8.RuneCountInString(got); n >= cols || !strings.HasPrefix(got, "indexing …") || !strings.Contains(got, "23.log") {
				t.Fatalf("%d cells: %q (%d cells)", cols, got, n)
			}
		}
	}
}

func TestFormatLeft(t *testing.T) {
	for _, c := range []struct {
		secs float64
		want string
	}{
		{0, "1s left"}, {0.2, "1s left"}, {1, "1s left"}, {41.1, "42s left"}, {59.5, "1m00s left"},
		{185, "3m05s left"}, {3599, "59m59s left"}, {3600, "1h00m left"}, {7800, "2h10m left"},
		{99*3600 + 3599, "99h59m left"}, {100 * 3600, ">99h left"}, {1e30, ">99h left"},
	} {
		if got := formatLeft(c.secs); got != c.want {
			t.Errorf("formatLeft(%v) = %q, want %q", c.secs, got, c.want)
		}
	}
}

func TestNoBarOffTerminal(t *testing.T) {
	var buf bytes.Buffer
	if New(&buf, "x") != nil {
		t.Error("a bar was made for a buffer")
	}
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if New(f, "x") != nil {
		t.Error("a bar was made for a regular file")
	}
}

// TestLabelKeepsVerb: a long "verb path" label is cut inside the path, not
// in the verb (it used to read "…xing" on narrow terminals).
func TestLabelKeepsVerb(t *testing.T) {
	for _, tc := range []struct {
		label string
		n     int
		want  string
	}{
		{"indexing /data/logs/000123.log", 40, "indexing /data/logs/000123.log"},
		{"indexing /very/long/directory/of/logs/000123.log", 24, "indexing …ogs/000123.log"},
		{"indexing /very/long/directory/of/logs/000123.log", 16, "indexing …23.log"},
		{"reading /a/b/c/d/e/f/g.log", 12, "…d/e/f/g.log"},
		{"nospace/path/to/a/file.log", 10, "…/file.log"},
	} {
		if got := shortenLabel(tc.label, tc.n); got != tc.want || utf8.RuneCountInString(got) > tc.n {
			t.Errorf("shortenLabel(%q, %d) = %q; want %q", tc.label, tc.n, got, tc.want)
		}
	}
}
