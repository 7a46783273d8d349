package report

import (
	"fmt"
	"io"

	"github.com/recfs/recfs/index"
)

// Pruned is what `recfs index --prune` prints: what pruning the cache
// directory removed and kept. It is also the one-line object of --json,
// whose fields are in name order.
type Pruned struct {
	Kept         int    `json:"kept"`          // saved indexes kept
	KeptBytes    int64  `json:"kept_bytes"`    // their bytes
	Dir          string `json:"pruned"`        // the directory pruned
	Removed      int    `json:"removed"`       // saved indexes removed
	RemovedBytes int64  `json:"removed_bytes"` // their bytes
}

// PrunedOf is what res says.
func PrunedOf(res index.PruneResult) Pruned {
	return Pruned{Kept: res.Kept, KeptBytes: res.KeptBytes, Dir: res.Dir, Removed: res.Removed, RemovedBytes: res.RemovedBytes}
}

// WriteText writes p as one line: "pruned DIR: removed 2 saved indexes
// (1.5 KiB), kept 3 (2.0 MiB)".
func (p Pruned) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "pruned %s: removed %d saved indexes (%s), kept %d (%s)\n",
		p.Dir, p.Removed, HumanBytes(p.RemovedBytes), p.Kept, HumanBytes(p.KeptBytes))
	return err
}

// HumanBytes formats n bytes with a binary unit: "1023 B", "1.5 KiB",
// "2048.0 TiB".
func HumanBytes(n int64) string {
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
