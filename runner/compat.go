package runner

import "github.com/stepd/stepd/store"

// createsEagerly: TEMPORARY until the store contract is merged.
func createsEagerly(st store.Store) bool {
	_, ok := st.(store.EagerCreator)
	return ok
}
