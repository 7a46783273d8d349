package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// Progress bar tuning: nothing is drawn for quick jobs, and redraws are
// rate-limited so a fast scanner does not flood the terminal.
const (
	progressDelay    = 400 * time.Millisecond // first draw after this long
	progressInterval = 100 * time.Millisecond // at most one redraw per interval
	progressWidth    = 30                     // cells of the bar itself
	progressLabelMax = 32                     // longer labels are shortened
)

// progressBar draws a one-line progress bar on a terminal. Its Update method
// matches index.Options.Progress and may be called from several goroutines.
type progressBar struct {
	mu     sync.Mutex
	w      io.Writer
	label  string
	now    func() time.Time
	start  time.Time
	last   time.Time // time of the last draw
	drawn  bool      // something is on the line and must be cleared
	closed bool
}

// isTerminal reports whether w is a character device, such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// newProgressBar returns a bar drawing on w, or nil when w is not a
// terminal (a log file or a pipe gets no carriage-return noise).
func newProgressBar(w io.Writer, label string) *progressBar {
	if !isTerminal(w) {
		return nil
	}
	return newProgressBarClock(w, label, time.Now)
}

// newProgressBarClock returns a bar on w that reads the time from now.
func newProgressBarClock(w io.Writer, label string, now func() time.Time) *progressBar {
	return &progressBar{w: w, label: shortenLabel(label, labelWidth(w)), now: now, start: now()}
}

// progressRest is how many cells of a line the bar, percentage, sizes and
// time take after the label.
const progressRest = 2 + progressWidth + 34

// labelWidth returns how many cells the label may take on w: what a
// terminal's width leaves beside the rest of the line (at least 16, at most
// 60), or progressLabelMax when the width is unknown.
func labelWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return progressLabelMax
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return progressLabelMax
	}
	return max(16, min(60, int(ws.Col)-progressRest))
}

// shortenLabel fits label into n cells. A label "verb path" keeps its verb
// and loses the start of the path ("indexing …/logs/000123.log"), so the
// line still says what is going on and which file it is.
func shortenLabel(label string, n int) string {
	if utf8.RuneCountInString(label) <= n {
		return label
	}
	verb, rest, ok := strings.Cut(label, " ")
	if !ok || utf8.RuneCountInString(verb)+2+6 > n { // room for 6 cells of the path
		verb, rest = "", label
	} else {
		verb += " "
	}
	keep := n - utf8.RuneCountInString(verb) - 1
	r := []rune(rest)
	return verb + "…" + string(r[len(r)-keep:])
}

// Update records that done of total bytes are processed and redraws the bar
// when it is due.
func (p *progressBar) Update(done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	t := p.now()
	if t.Sub(p.start) < progressDelay || (p.drawn && t.Sub(p.last) < progressInterval) {
		return
	}
	p.last = t
	p.drawn = true
	fmt.Fprint(p.w, "\r"+renderProgress(p.label, done, total, t.Sub(p.start))+"\x1b[K")
}

// Done erases the bar; later Updates draw nothing.
func (p *progressBar) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	p.closed = true
}

// renderProgress formats one bar line (without control characters).
func renderProgress(label string, done, total int64, elapsed time.Duration) string {
	if total <= 0 {
		return fmt.Sprintf("%s %s %.1fs", label, humanBytes(done), elapsed.Seconds())
	}
	done = max(0, min(done, total))
	frac := float64(done) / float64(total)
	fill := int(frac * progressWidth)
	bar := strings.Repeat("=", fill) + strings.Repeat(" ", progressWidth-fill)
	return fmt.Sprintf("%s [%s] %3d%% %s/%s %.1fs", label, bar, int(frac*100), humanBytes(done), humanBytes(total), elapsed.Seconds())
}

// humanBytes formats n bytes with a binary unit.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		v /= unit
		if v < unit || u == "TiB" {
			return fmt.Sprintf("%.1f %s", v, u)
		}
	}
	return ""
}
