package job

// SweepStep is what a sweep step (type: sweep, Azure's sweep node: a
// trial component run with hyperparameters drawn from a search space,
// whose outputs are its best trial's) adds to a step: its trial is the step's
// Component (the CLI inlines `trial: ./train.yml`; azureml:<name>:<version>
// is resolved at submit as a component step's), and its search space
// names inputs of that component, which the hyperparameters give.
type SweepStep struct {
	SearchSpace       map[string]*SearchParam `json:"search_space"`
	SamplingAlgorithm *SamplingAlgorithm      `json:"sampling_algorithm"`
	Objective         *Objective              `json:"objective"`
	Limits            *SweepLimits            `json:"limits,omitempty"`
	EarlyTermination  *EarlyTermination       `json:"early_termination,omitempty"`
}
