// Every experiment of the suite, in the order `quick_bench` runs them.
#include "support/experiment.h"

namespace quick::bench {

Experiment many_tenants_drain_experiment();
Experiment one_tenant_drain_experiment();

const std::vector<Experiment>& all_experiments() {
  static const std::vector<Experiment> experiments = {
      many_tenants_drain_experiment(),
      one_tenant_drain_experiment(),
  };
  return experiments;
}

}  // namespace quick::bench
