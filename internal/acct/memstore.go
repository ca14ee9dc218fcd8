package acct

import (
	"context"
	"sync"
)

// MemStore is an in-memory Store: the simulator's and the tests'. It
// follows the same contract as the SQL stores (private copies, atomic
// Update) without persistence.
type MemStore struct {
	mu    sync.Mutex
	st    *State
	usage map[[2]any]Usage
}

// NewMemStore returns a store holding a fresh database (NewState).
func NewMemStore() *MemStore { return &MemStore{st: NewState(), usage: map[[2]any]Usage{}} }

// Load returns a copy of the state.
func (m *MemStore) Load(context.Context) (*State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st.Clone(), nil
}

// Update runs fn on a copy and keeps it if fn succeeds.
func (m *MemStore) Update(_ context.Context, fn func(*State) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	work := m.st.Clone()
	if err := fn(work); err != nil {
		return err
	}
	m.st = work
	return nil
}

// LoadUsage returns the usage records.
func (m *MemStore) LoadUsage(context.Context) ([]Usage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Usage, 0, len(m.usage))
	for _, u := range m.usage {
		out = append(out, u)
	}
	sortUsage(out)
	return out, nil
}

// SaveUsage stores usage records by kind and id.
func (m *MemStore) SaveUsage(_ context.Context, us []Usage) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, u := range us {
		m.usage[[2]any{u.Kind, u.ID}] = u
	}
	return nil
}

// Close does nothing.
func (m *MemStore) Close() error { return nil }
