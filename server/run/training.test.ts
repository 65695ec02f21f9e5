/** The ATOMO decompositions train the default MLP run to their bar (server/testing/trainingRuns.ts). */
import { ATOMO_SCHEMES, describeTraining } from '../testing/trainingRuns';

describeTraining(ATOMO_SCHEMES);
