package index

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// Pruning keeps the cache directory small. A saved index is removed when
// its source no longer exists (or is another file now), when it has not
// been used for PruneOptions.MaxAge, or when it was written by another
// version of recfs; then, while the indexes left take more than
// PruneOptions.MaxBytes, the least recently used go. Leftover temporary
// files of interrupted saves go too. Only regular files of the running
// user directly in the cache directory and named like cache files are
// touched (never torn-tail backups, never anything else); they are opened
// as cache files are (O_NOFOLLOW, beneath the directory's descriptor).

// Defaults of PruneOptions.
const (
	DefaultCacheMaxBytes = 1 << 30             // 1 GiB
	DefaultCacheMaxAge   = 30 * 24 * time.Hour // unused for 30 days
)

// autoPruneEvery is how often a save prunes its directory (a stamp file
// records the last time).
const autoPruneEvery = 24 * time.Hour

// pruneStamp is the stamp file of automatic pruning.
const pruneStamp = ".last-prune"

// tmpMaxAge is how old a temporary file of a save must be to be removed.
const tmpMaxAge = time.Hour

// headerRead is how many bytes of a cache file pruning reads: its magic,
// version, identity (with a local file's version text, at most 128 bytes)
// and source path.
const headerRead = 8 + 4 + 56 + 128 + 4 + 4096

// PruneOptions bound the cache directory.
type PruneOptions struct {
	// MaxBytes caps the bytes of saved indexes kept (0: DefaultCacheMaxBytes;
	// negative: no cap).
	MaxBytes int64
	// MaxAge removes indexes unused for longer (0: DefaultCacheMaxAge;
	// negative: none for age).
	MaxAge time.Duration
}

// PruneResult says what pruning did.
type PruneResult struct {
	Dir                     string // the directory pruned (a per-user subdirectory in a shared one)
	Kept, Removed           int    // saved indexes
	KeptBytes, RemovedBytes int64
}

// PruneCache prunes the cache directory dir ("" : the default, as
// Options.CacheDir). A missing directory has nothing to prune.
func PruneCache(dir string, o PruneOptions) (PruneResult, error) {
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return PruneResult{}, err
		}
		dir = filepath.Join(base, "recfs")
	}
	d, err := openCacheDir(dir, false)
	if errors.Is(err, os.ErrNotExist) {
		return PruneResult{Dir: dir}, nil
	}
	if err != nil {
		return PruneResult{}, err
	}
	defer d.Close()
	return pruneDir(d, o, time.Now())
}

// cacheEntry is one saved index met while pruning.
type cacheEntry struct {
	name  string
	size  int64
	mtime time.Time
}

// pruneDir prunes the open cache directory d.
func pruneDir(d *os.File, o PruneOptions, now time.Time) (PruneResult, error) {
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultCacheMaxBytes
	}
	if o.MaxAge == 0 {
		o.MaxAge = DefaultCacheMaxAge
	}
	res := PruneResult{Dir: d.Name()}
	dfd := int(d.Fd())
	names, err := d.Readdirnames(-1)
	if err != nil {
		return res, err
	}
	var keep []cacheEntry
	for _, name := range names {
		isTmp := strings.HasPrefix(name, ".tmp-") && strings.HasSuffix(name, ".idx")
		if !isTmp && !isCacheName(name) {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue
		}
		if st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() {
			continue
		}
		e := cacheEntry{name: name, size: st.Size, mtime: time.Unix(st.Mtim.Unix())}
		var why string
		switch {
		case isTmp:
			if now.Sub(e.mtime) > tmpMaxAge {
				why = "unfinished save"
			}
		case o.MaxAge > 0 && now.Sub(e.mtime) > o.MaxAge:
			why = "unused"
		default:
			why = staleReason(dfd, name)
		}
		if why == "" {
			if !isTmp {
				keep = append(keep, e)
			}
			continue
		}
		if removeEntry(dfd, e, why, d.Name()) && !isTmp {
			res.Removed++
			res.RemovedBytes += e.size
		}
	}
	// Least recently used first out, while over the cap.
	sort.Slice(keep, func(i, j int) bool { return keep[i].mtime.Before(keep[j].mtime) })
	var total int64
	for _, e := range keep {
		total += e.size
	}
	for len(keep) > 0 && o.MaxBytes >= 0 && total > o.MaxBytes {
		e := keep[0]
		keep = keep[1:]
		if removeEntry(dfd, e, "over the size cap", d.Name()) {
			total -= e.size
			res.Removed++
			res.RemovedBytes += e.size
		}
	}
	res.Kept, res.KeptBytes = len(keep), total
	return res, nil
}

// isCacheName reports whether name is a cache file's name: 32 hex digits
// and ".idx".
func isCacheName(name string) bool {
	hexPart, ok := strings.CutSuffix(name, ".idx")
	if !ok || len(hexPart) != 32 {
		return false
	}
	for _, c := range hexPart {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// staleReason reads the head of cache file name and says why it can go:
// "" to keep it, "old format" for another version's file, "source gone"
// when its source path no longer names the file it was saved for.
func staleReason(dfd int, name string) string {
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, headerRead))
	if err != nil {
		return ""
	}
	dec := decoder{b: b}
	if dec.str() != cacheMagic || dec.u32() != cacheVersion {
		return "old format"
	}
	id := dec.identity()
	origin := dec.str()
	if dec.err != nil || origin == "" {
		return "" // a path too long to read here: age and size decide
	}
	var st unix.Stat_t
	if err := unix.Stat(origin, &st); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return "source gone"
		}
		return ""
	}
	if uint64(st.Dev) != id.dev || st.Ino != id.ino {
		return "source gone" // another file has its name now
	}
	return ""
}

// removeEntry unlinks e from the directory and logs why.
func removeEntry(dfd int, e cacheEntry, why, dir string) bool {
	if err := unix.Unlinkat(dfd, e.name, 0); err != nil {
		return false
	}
	logrus.WithFields(logrus.Fields{"file": filepath.Join(dir, e.name), "bytes": e.size, "reason": why}).Debug("index: pruned saved index")
	return true
}

// autoPruned holds the directories this process has pruned already.
var autoPruned sync.Map

// autoPrune prunes dir with the defaults when its stamp file says the last
// pruning is older than autoPruneEvery, once per process and directory.
func autoPrune(dir string) {
	if _, done := autoPruned.LoadOrStore(dir, true); done {
		return
	}
	d, err := openCacheDir(dir, false)
	if err != nil {
		return
	}
	defer d.Close()
	dfd := int(d.Fd())
	var st unix.Stat_t
	if unix.Fstatat(dfd, pruneStamp, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && time.Since(time.Unix(st.Mtim.Unix())) < autoPruneEvery {
		return
	}
	fd, err := unix.Openat(dfd, pruneStamp, unix.O_WRONLY|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return
	}
	now := unix.NsecToTimeval(time.Now().UnixNano())
	_ = unix.Futimes(fd, []unix.Timeval{now, now})
	unix.Close(fd)
	if res, err := pruneDir(d, PruneOptions{}, time.Now()); err == nil && res.Removed > 0 {
		logrus.WithFields(logrus.Fields{"dir": res.Dir, "removed": res.Removed, "bytes": res.RemovedBytes}).Info("index: pruned the cache")
	}
}
