package runtime

// Services carries embedder-provided dependencies (a sandbox, a model
// client) to nodes. Values go in and come out through typed keys, so a
// node asking for the wrong type does not compile instead of silently
// finding nothing. The zero value is an empty set.
type Services struct {
	m map[*serviceID]any
}

// serviceID is a key's identity: two keys are the same key only when they
// come from the same NewServiceKey call, even if their names match.
type serviceID struct{ name string }

// ServiceKey names one service of type T. Declare keys once, as package
// variables, with NewServiceKey.
type ServiceKey[T any] struct {
	id *serviceID
}

// NewServiceKey returns a fresh key; name is for messages only.
func NewServiceKey[T any](name string) ServiceKey[T] {
	return ServiceKey[T]{id: &serviceID{name: name}}
}

// Name is the key's name.
func (k ServiceKey[T]) Name() string {
	if k.id == nil {
		return ""
	}
	return k.id.name
}

// Set stores v under the key. It copies the set first: copies of a
// Services value (every Input holds one) share storage, and a node setting
// a service must not change what concurrent nodes see. It panics on the
// zero key: a key never made with NewServiceKey is a programming error.
func (k ServiceKey[T]) Set(s *Services, v T) {
	if k.id == nil {
		panic("runtime: Set on a zero ServiceKey; declare keys with NewServiceKey")
	}
	*s = s.Merge(Services{m: map[*serviceID]any{k.id: v}})
}

// Lookup returns the key's value in s, if s has one.
func (k ServiceKey[T]) Lookup(s Services) (T, bool) {
	v, ok := s.m[k.id].(T)
	return v, ok
}

// Get returns the key's value among a node's services.
func (k ServiceKey[T]) Get(in *Input) (T, bool) {
	if in == nil {
		var zero T
		return zero, false
	}
	return k.Lookup(in.Services)
}

// Len is how many services s holds.
func (s Services) Len() int { return len(s.m) }

// Merge returns a new set with s's services and over's, over's winning
// where both hold the same key. Neither input changes.
func (s Services) Merge(over Services) Services {
	out := Services{m: make(map[*serviceID]any, len(s.m)+len(over.m))}
	for k, v := range s.m {
		out.m[k] = v
	}
	for k, v := range over.m {
		out.m[k] = v
	}
	return out
}
