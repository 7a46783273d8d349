package codec

// DamageLog is the list of byte ranges a scanner skipped as damage, kept
// in offset order, and the strict scan's rule: under Strict, recording a
// range yields the *CorruptError the scan must end with.
type DamageLog struct {
	Format Format // the format its CorruptErrors name
	Strict bool   // Add returns each range as a *CorruptError
	// Join makes a range that starts where the previous one ends, of the
	// same kind and error, extend it (see AddDamage) rather than follow it.
	Join bool

	ranges []Damage
}

// Add records d. Under Strict it returns d as the *CorruptError that ends
// the scan; else nil.
func (l *DamageLog) Add(d Damage) error {
	if l.Join {
		l.ranges = AddDamage(l.ranges, d)
	} else {
		l.ranges = append(l.ranges, d)
	}
	if l.Strict {
		return d.AsError(l.Format)
	}
	return nil
}

// Ranges returns the ranges recorded, in offset order. The slice is the
// log's own: a later Add may change its last element.
func (l *DamageLog) Ranges() []Damage { return l.ranges }

// Last returns the range recorded last, for a scanner to classify once
// it knows more (a torn tail); nil when there is none.
func (l *DamageLog) Last() *Damage {
	if len(l.ranges) == 0 {
		return nil
	}
	return &l.ranges[len(l.ranges)-1]
}
