import { describe, expect, it } from 'vitest';
import { createOracleAgent } from '../../agents/oracle.js';
import { createRetailRuleBasedAgent } from './rule-based.js';
import { digest, type Agent, type Task } from '../../core/index.js';
import { instantiateTask } from '../../generation/index.js';
import { createEpisode, createRuntimeCache } from '../../runtime/index.js';
import { retail, retailTemplates } from './index.js';

/**
 * Per template: the digest of its tasks at levels 1-5 (seed 5, index 0) as JSON text, key order included
 * (`origin` left out: it carries the transpiled source's digest).
 */
const TASKS: Record<string, string> = {
  'retail/order-status@2': '067eda0d825e8991db01f361ac011ef0ae9acd8d261a9dad5f17a7c4898d648e',
  'retail/cancel@2': 'ef014081ce2044560ce9af54336f9ae443f8ac5436fcbf13371700119f4a2238',
  'retail/return-refund@2': '7feda2b1c810a813cd00f65fe5be1d185d02b601d135026378ce329a62b144d3',
  'retail/exchange@2': '5c51aaa27ced6c353ae404bec78e7e00007dc46609a6e8feb9348c34407fad16',
  'retail/address-change@2': '60ab936d8ccc6b39dbd9b2772cef8739af45690f0b450d7d6e213065f077e47e',
  'retail/payment-change@2': '3259ba9941d53c968137ea50b5f5d5df5f9313ffcb9af4c453c0148d597f6c12',
  'retail/compound@2': '73099784232a8d131e8d54030acd7d59b68f83f33b6171c6700b864aa580b642',
  'retail/conditional@2': '39876fb91475da3bd4b0d8309b4b974e755c8450b2b569e2f467a3f35fb65dec',
  'retail/out-of-scope@2': '16ccee9592bf68070765d726e8de52fb2c15dc86a7864ee548f9c049804f080c',
  'retail/policy-trap@2': '78ccc4d2f38dcc742c0acbc7128fcbc9fc077813163676ee29aa815e861c5adc',
  'retail/compound-heldout@2': 'ab22d3c1efe037f64fe3a266b516c5bcbcf18815868907670b41750427e4e698',
  'retail/conditional-heldout@2': 'd275c852375f1ccfb7a274172b9595101fa7bb45b00912be687d1eba0d256971',
};

/**
 * Per template: the digest of two conversations, the rule-based agent at level 4 and the oracle at level 5
 * (every action, every observation's kind and text, the outcome and whether it ended).
 */
const CONVERSATIONS: Record<string, string> = {
  'retail/order-status@2': '1d609231f027b979750ecb355c24ccda356e09bc45b245618575ddf7386331a5',
  'retail/cancel@2': 'c83658860dcb2f986306e680cb2fbc660a3e3606035c0b08fa84466ffce78904',
  'retail/return-refund@2': 'b98e4d68827eb04a709fd06e4b425398a78395782356d7de808cb9fd5f771d8d',
  'retail/exchange@2': '7727003cf4b5f61f7ce1b42652fa6ec1a327c3b89ceeb59caff855642c603b2f',
  'retail/address-change@2': '26f7d288d55eeaa4db8920ddc23e26b2529c8fd3b2a2c3abc8518c78d50bde8c',
  'retail/payment-change@2': 'f022b5c40597a0a8551b86eb1160548d0dcccb29b364d827d9b36b3baf46e5d0',
  'retail/compound@2': 'c58046cf7f7432f47a0a697a784c01bdce4a9a2adaa49ba65424dfd9c517d47c',
  'retail/conditional@2': 'c691e5f7d48518d1f44c10dfbc0ea92a0a1bd9ae4e808b49bfd381f9a98ca414',
  'retail/out-of-scope@2': 'f075767cf2ff749ad57855301ced4272ef79086a7bebc15ad96cb42d3e902aab',
  'retail/policy-trap@2': '3f45311c1c468c1458bfd28003409623b5bfbed8d3644fc930ffe6764b372be4',
  'retail/compound-heldout@2': 'd8083657e197b8cc88a38fd68981783b88700f24a923b180ee4f27a8018f2ebb',
  'retail/conditional-heldout@2': 'e73c2589be798fd9039c1e91101f5d2efa0cfacbf6137ae275480cf050fab925',
};

function taskText(task: Task): string {
  const { origin: _origin, ...rest } = task;
  return JSON.stringify(rest);
}

async function conversation(task: Task, agent: Agent, seed: number): Promise<unknown[]> {
  const episode = createEpisode(retail, task, { cache, agent: agent.name });
  let observation = episode.reset({ seed });
  const session = agent.begin({ episodeId: episode.id!, seed, domain: 'retail', ...(agent.privileged ? { task } : {}) });
  const lines: unknown[] = [observation.text ?? null];
  while (episode.status === 'running' && lines.length < 400) {
    const action = await session.act(observation);
    const result = episode.step(action);
    session.observe?.(result);
    lines.push(action, result.observation.kind, result.observation.text ?? null, result.info.outcome, result.terminated, result.truncated);
    observation = result.observation;
  }
  return lines;
}

const cache = createRuntimeCache(retail);

// Regenerate with PIN=1 (prints the tables), only for a deliberate change of what tasks or the customer say.
describe('retail: pinned tasks and conversations', () => {
  it('builds byte-identical tasks for every template and level', () => {
    const got: Record<string, string> = {};
    for (const template of retailTemplates) {
      got[template.id] = digest([1, 2, 3, 4, 5].map((level) => taskText(instantiateTask(template, { level, seed: 5, index: 0 }))));
    }
    if (process.env['PIN'] === '1') console.log('TASKS', JSON.stringify(got, null, 2));
    expect(got).toEqual(TASKS);
  });

  it('has the customer say exactly the same things in a rule-based and an oracle conversation per template', async () => {
    const got: Record<string, string> = {};
    for (const template of retailTemplates) {
      const rule = await conversation(instantiateTask(template, { level: 4, seed: 5, index: 0 }), createRetailRuleBasedAgent(), 3);
      const oracle = await conversation(instantiateTask(template, { level: 5, seed: 5, index: 0 }), createOracleAgent(), 4);
      got[template.id] = digest([rule, oracle]);
    }
    if (process.env['PIN'] === '1') console.log('CONVERSATIONS', JSON.stringify(got, null, 2));
    expect(got).toEqual(CONVERSATIONS);
  });
});
