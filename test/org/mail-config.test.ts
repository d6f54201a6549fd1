/** SMTP_URL, MAIL_FROM and SMTP_TIMEOUT_SECONDS as src/config.ts reads them: what starts, and what stops the start. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const mailOf = (env: Record<string, string>) => loadConfig(env, false).org.mail;
const problemOf = (env: Record<string, string>) => {
  try {
    loadConfig(env, false);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('the configuration was accepted');
};

describe('mail settings', () => {
  it('sends no email without SMTP_URL', () => {
    expect(mailOf({})).toBeUndefined();
    expect(mailOf({ MAIL_FROM: 'atrium@example.com' })).toBeUndefined();
  });

  it('takes smtp:// and smtps:// URLs, with credentials, and a bare or named From', () => {
    expect(mailOf({ SMTP_URL: 'smtp://mail.example.com', MAIL_FROM: 'atrium@example.com' })).toEqual({
      url: 'smtp://mail.example.com',
      from: 'atrium@example.com',
      timeoutSeconds: 10,
    });
    expect(mailOf({ SMTP_URL: 'smtps://user:p%40ss@mail.example.com:465', MAIL_FROM: 'Atrium <atrium@example.com>', SMTP_TIMEOUT_SECONDS: '3' })).toEqual({
      url: 'smtps://user:p%40ss@mail.example.com:465',
      from: 'Atrium <atrium@example.com>',
      timeoutSeconds: 3,
    });
  });

  it.each([
    [{ SMTP_URL: 'smtp://mail.example.com' }, 'invalid configuration: MAIL_FROM: is required when SMTP_URL is set'],
    [{ SMTP_URL: 'http://mail.example.com', MAIL_FROM: 'a@example.com' }, 'invalid configuration: SMTP_URL: must be an smtp:// or smtps:// URL with a host, such as smtps://user:pass@mail.example.com:465'],
    [{ SMTP_URL: 'smtp://user:pass@', MAIL_FROM: 'a@example.com' }, 'invalid configuration: SMTP_URL: Invalid URL'],
    [{ SMTP_URL: 'smtp://mail.example.com', MAIL_FROM: 'Atrium' }, 'invalid configuration: MAIL_FROM: must be an address such as atrium@example.com or "Atrium <atrium@example.com>"'],
    [{ SMTP_URL: 'smtp://mail.example.com', MAIL_FROM: 'a@example.com', SMTP_TIMEOUT_SECONDS: '0' }, 'invalid configuration: SMTP_TIMEOUT_SECONDS: Too small: expected number to be >=1'],
  ])('refuses %j', (env, message) => {
    expect(problemOf(env)).toBe(message);
  });
});
