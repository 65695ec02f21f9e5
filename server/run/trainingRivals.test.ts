/** float32 and the rival schemes train the default MLP run to their bar (server/testing/trainingRuns.ts). */
import { describeTraining, OTHER_SCHEMES } from '../testing/trainingRuns';

describeTraining(OTHER_SCHEMES);
