// The browser dashboard's language choice (src/core/dashboard/locale.ts): Accept-Language by q,
// `--lang` over it, English when nothing has a bundle; and the zh-cn bundle it reads is the repo's.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { parseDashboardArgs } from '../../../src/cli/dashboardArgs';
import { fromAcceptLanguage, Locales } from '../../../src/core/dashboard/locale';

const L10N = path.resolve(__dirname, '..', '..', '..', 'l10n');

test('Accept-Language: the first language by q that is English or has a bundle', () => {
  assert.equal(fromAcceptLanguage('zh-CN,zh;q=0.9,en;q=0.8'), 'zh-cn');
  assert.equal(fromAcceptLanguage('en-US,en;q=0.9,zh-CN;q=0.8'), 'en');
  assert.equal(fromAcceptLanguage('fr-FR, zh-Hans;q=0.5'), 'zh-cn', 'French has no bundle: the next one');
  assert.equal(fromAcceptLanguage('en;q=0.1, zh;q=0.7'), 'zh-cn', 'ordered by q, not position');
  assert.equal(fromAcceptLanguage('de, fr'), undefined);
  assert.equal(fromAcceptLanguage(undefined), undefined);
  assert.equal(fromAcceptLanguage('zh-CN;q=0'), undefined, 'q=0 means not acceptable');
});

test('the locale of a request: --lang wins, a missing bundle is English', () => {
  const auto = new Locales(L10N);
  const zh = auto.forRequest('zh-CN,zh;q=0.9');
  assert.equal(zh.language, 'zh-cn');
  assert.equal(zh.t('Compare: {0} runs', 3), '比较：3 个运行');
  assert.equal(auto.forRequest('en-GB').t('Compare: {0} runs', 3), 'Compare: 3 runs');
  assert.equal(new Locales(L10N, 'zh-cn').forRequest('en-US').language, 'zh-cn');
  assert.equal(new Locales(L10N, 'en').forRequest('zh-CN').language, 'en');
  const nowhere = new Locales(path.join(L10N, 'missing'));
  assert.equal(nowhere.forRequest('zh-CN').language, 'en', 'no bundle file: English');
});

test('`dashboard --lang`: en or zh-cn, anything else refused naming the flag', () => {
  assert.equal(parseDashboardArgs(['runs', '--lang', 'zh-CN']).lang, 'zh-cn');
  assert.equal(parseDashboardArgs(['runs', '--lang', 'en']).lang, 'en');
  assert.throws(() => parseDashboardArgs(['runs', '--lang', 'fr']), /--lang needs en or zh-cn, got "fr"/);
  assert.throws(() => parseDashboardArgs(['runs', '--lang']), /--lang needs en or zh-cn/);
});
