package facts

// ShortKey strips the run's prefix from a key, for messages; Violation.Key
// keeps the whole key.
func ShortKey(prefix, key string) string {
	if prefix != "" && len(key) > len(prefix) && key[:len(prefix)] == prefix {
		return key[len(prefix):]
	}
	return key
}

// KeyRange is a watched or requested range: a single key when end is
// empty, every key from key on when end is "\x00", else [key, end).
type KeyRange struct{ Key, End string }

func (r KeyRange) Contains(k string) bool {
	switch r.End {
	case "":
		return k == r.Key
	case "\x00":
		return k >= r.Key
	}
	return k >= r.Key && k < r.End
}
