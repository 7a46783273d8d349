// Package progress draws a one-line progress bar on a terminal for work
// measured in bytes: the share done, the bytes, the rate since the start
// and the time left at that rate. Off a terminal it draws nothing.
package progress

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/recfs/recfs/index/report"
)

// Progress bar tuning: nothing is drawn for quick jobs, and the line is
// redrawn on a clock, so a fast scanner does not flood the terminal and a
// stalled one still shows its rate falling.
const (
	progressDelay    = 400 * time.Millisecond // first draw after this long
	progressInterval = 100 * time.Millisecond // one redraw per interval
	progressWidth    = 30                     // cells of the bar at most
	progressMinWidth = 8                      // cells of the bar at least
	progressLabelMax = 32                     // label cells when the width is unknown
	progressLabelMin = 16                     // label cells at least
	progressLabelCap = 60                     // label cells at most
)

// Bar draws a one-line progress bar on a terminal: the share done,
// the bytes, the rate since the bar started and the time left at that
// rate. Update records the state (it matches index.Options.Progress and
// may be called from several goroutines); the line is drawn on each tick
// of a clock, from progressDelay on, so a stall shows too.
type Bar struct {
	mu          sync.Mutex
	w           io.Writer
	label       string
	cols        int // the terminal's width; 0 when unknown
	now         func() time.Time
	start       time.Time
	done, total int64
	seen        bool // an Update arrived
	drawn       bool // something is on the line and must be cleared
	closed      bool
	stop        chan struct{} // closed by Done; ends the ticking goroutine
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

// New returns a bar drawing on w, or nil when w is not a
// terminal (a log file or a pipe gets no carriage-return noise). It redraws
// every progressInterval until Done.
func New(w io.Writer, label string) *Bar {
	if !isTerminal(w) {
		return nil
	}
	p := newClock(w, label, time.Now)
	p.cols = termWidth(w)
	p.stop = make(chan struct{})
	go func() {
		tk := time.NewTicker(progressInterval)
		defer tk.Stop()
		for {
			select {
			case <-tk.C:
				p.tick()
			case <-p.stop:
				return
			}
		}
	}()
	return p
}

// newClock returns a bar on w that reads the time from now and
// draws when tick is called (no clock of its own).
func newClock(w io.Writer, label string, now func() time.Time) *Bar {
	return &Bar{w: w, label: label, now: now, start: now()}
}

// termWidth returns the width of the terminal w, or 0 when unknown.
func termWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
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

// Update records that done of total bytes are processed; the next tick
// draws it.
func (p *Bar) Update(done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.total, p.seen = done, total, true
}

// tick redraws the line with the last Update, once progressDelay has
// passed since the bar started.
func (p *Bar) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || !p.seen {
		return
	}
	elapsed := p.now().Sub(p.start)
	if elapsed < progressDelay {
		return
	}
	p.drawn = true
	fmt.Fprint(p.w, "\r"+render(p.label, p.done, p.total, elapsed, p.cols)+"\x1b[K")
}

// Done erases the bar; nothing is drawn after it.
func (p *Bar) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	p.closed = true
	if p.stop != nil {
		close(p.stop)
	}
}

// render formats one line (without control characters) that fits
// in cols cells (0: the width is unknown): the label, a bar, the share and
// bytes done, the rate since the start and the time left at that rate.
// Without a total (total <= 0) it says the bytes, the rate and the time
// spent.
func render(label string, done, total int64, elapsed time.Duration, cols int) string {
	done = max(0, done)
	if total > 0 {
		done = min(done, total)
	}
	var rate float64 // bytes per second
	if secs := elapsed.Seconds(); secs > 0 && done > 0 {
		rate = float64(done) / secs
	}
	speed := ""
	if rate > 0 {
		speed = " " + report.HumanBytes(int64(rate)) + "/s"
	}
	if total <= 0 {
		right := fmt.Sprintf(" %s%s %.1fs", report.HumanBytes(done), speed, elapsed.Seconds())
		return fitLabel(label, cols, utf8.RuneCountInString(right)) + right
	}
	frac := float64(done) / float64(total)
	right := fmt.Sprintf("] %3d%% %s/%s%s", int(frac*100), report.HumanBytes(done), report.HumanBytes(total), speed)
	if rate > 0 && done < total {
		right += " " + formatLeft(float64(total-done)/rate)
	}
	width, labelMax := progressWidth, progressLabelMax
	if cols > 0 {
		// What the figures leave (one cell spare, so the line never wraps)
		// goes to the label first, then to the bar, each within bounds.
		room := cols - 1 - utf8.RuneCountInString(right) - 2 // " ["
		want := min(utf8.RuneCountInString(label), progressLabelCap)
		width = max(progressMinWidth, min(progressWidth, room-want))
		labelMax = max(progressLabelMin, min(progressLabelCap, room-width))
	}
	fill := int(frac * float64(width))
	bar := strings.Repeat("=", fill) + strings.Repeat(" ", width-fill)
	return shortenLabel(label, labelMax) + " [" + bar + right
}

// fitLabel shortens label to what cols cells leave beside rest cells (at
// least progressLabelMin, at most progressLabelCap), or to
// progressLabelMax when cols is 0 (unknown).
func fitLabel(label string, cols, rest int) string {
	n := progressLabelMax
	if cols > 0 {
		n = max(progressLabelMin, min(progressLabelCap, cols-1-rest))
	}
	return shortenLabel(label, n)
}

// formatLeft says how long secs seconds are, coarsely and rounded up:
// "42s left", "3m05s left", "2h10m left", ">99h left".
func formatLeft(secs float64) string {
	if !(secs < 100*3600) { // also NaN
		return ">99h left"
	}
	s := int64(math.Ceil(secs))
	switch {
	case s < 60:
		return fmt.Sprintf("%ds left", max(s, 1))
	case s < 3600:
		return fmt.Sprintf("%dm%02ds left", s/60, s%60)
	case s < 100*3600:
		return fmt.Sprintf("%dh%02dm left", s/3600, s%3600/60)
	}
	return ">99h left"
}
