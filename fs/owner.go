package fs

import "syscall"

// Ownership overrides the owner, group and permissions the tree reports
// (recfs mount --uid, --gid, --umask, -o noexec). The zero value reports
// those of the source files, as the tree always has.
type Ownership struct {
	// UID and GID replace every entry's owner and group when SetUID and
	// SetGID are true.
	UID, GID       uint32
	SetUID, SetGID bool
	// Umask, when SetUmask is true, replaces the permission bits that
	// follow the source: every entry gets the bits its kind has when
	// nothing is withheld (0555 for directories, 0777 for directories that
	// take writes, 0444 for records, 0555 for passed-through files, 0644
	// for files being written) minus Umask.
	Umask    uint32
	SetUmask bool
	// NoExec removes the execute bits of passed-through files.
	NoExec bool
}

// apply rewrites a, the attributes of an entry of kind k, by o.
func (o Ownership) apply(t *Tree, k Kind, a *Attr) {
	if o.SetUID {
		a.UID = o.UID
	}
	if o.SetGID {
		a.GID = o.GID
	}
	typ, perm := a.Mode&syscall.S_IFMT, a.Mode&0o7777
	if o.SetUmask {
		perm = t.fullPerm(k) &^ o.Umask
	}
	if o.NoExec && k == KindFile {
		perm &^= 0o111
	}
	a.Mode = typ | perm
}

// fullPerm returns the permissions an entry of kind k has when its source
// withholds nothing (mode 0777).
func (t *Tree) fullPerm(k Kind) uint32 {
	switch k {
	case KindDir:
		return t.dirPerm(0o777)
	case KindRecordDir:
		return t.recDirPerm(0o777)
	case KindTrailerDir:
		return 0o555
	case KindFile:
		return 0o555
	case KindPending:
		return 0o644
	}
	return 0o444
}
